package dev.idempotent.inbox;

import java.time.Duration;

/**
 * Observes an inbox. Every method has a no-op default; override what you need.
 *
 * <p>Timing relative to the transaction:
 *
 * <ul>
 *   <li>{@link #onPhase} with {@link Phase#RECORDED} and {@link Phase#EFFECT_DONE} fires
 *       <em>inside</em> the open transaction, on the thread that runs the effect: the caller's
 *       own, or under {@link CommitMode#GROUP} possibly another caller's, with the caller's
 *       {@link CallContext} in place. An exception thrown there rolls the message back and
 *       reaches the caller like the effect's own.
 *   <li>{@link #onPhase} with {@link Phase#COMMITTED} fires right after the commit returned, before
 *       {@code apply} returns.
 *   <li>{@link #onOutcome} fires after the commit (for {@link Outcome.Applied}) or after the
 *       transaction was released (for duplicates and conflicts, which write nothing).
 *   <li>{@link #onFailure} fires after the rollback, for every call that throws.
 * </ul>
 *
 * <p>Exceptions thrown by {@code onOutcome}, {@code onFailure} and the {@code COMMITTED} phase are
 * logged and ignored: a committed message is never turned into a failure by its observer.
 * Listeners must be thread-safe and should be quick, since the in-transaction phases hold the
 * write lock.
 */
public interface InboxListener {

    /** The listener that does nothing. */
    InboxListener NONE = new InboxListener() {};

    /**
     * A phase of a new message was reached; not called for duplicates or conflicts.
     *
     * @param inbox the inbox's name
     * @param id the business id
     * @param phase the phase just reached
     */
    default void onPhase(String inbox, String id, Phase phase) {}

    /**
     * A call ended with an outcome.
     *
     * @param inbox the inbox's name
     * @param outcome what happened; its {@code id()} names the business
     * @param took from the start of the call to the end of its transaction
     */
    default void onOutcome(String inbox, Outcome<?> outcome, Duration took) {}

    /**
     * A call ended with an exception, after everything it started was rolled back.
     *
     * @param inbox the inbox's name
     * @param id the business id as given; may be {@code null} or invalid when the failure is an
     *     {@link InvalidMessageException}
     * @param failure what the caller receives
     * @param took from the start of the call to the end of the rollback
     */
    default void onFailure(String inbox, String id, Throwable failure, Duration took) {}
}
