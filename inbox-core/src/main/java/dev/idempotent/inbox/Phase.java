package dev.idempotent.inbox;

/**
 * The points inside {@link Inbox#apply} at which {@link InboxListener#onPhase} fires, in order.
 * Crash tests halt the process at each of them to prove what survives.
 */
public enum Phase {
    /** The inbox row is written; the transaction is open and nothing is committed yet. */
    RECORDED,
    /** The effect returned; the transaction is still open. */
    EFFECT_DONE,
    /** The commit returned; {@code apply} has not yet returned to its caller. */
    COMMITTED
}
