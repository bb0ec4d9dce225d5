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
 *   <li>{@link #onTimed} fires right before {@code onOutcome} or {@code onFailure}, for the calls
 *       to {@code apply} whose work began in a transaction.
 *   <li>{@link #onGroupCommitted} fires after each commit of a group under {@link CommitMode#GROUP},
 *       on the thread that led it, before the group's callers return.
 *   <li>{@link #onPurged} fires after a {@link InboxRetention#purge()} deleted its last batch.
 * </ul>
 *
 * <p>Exceptions thrown by every method but the in-transaction phases are logged and ignored: a
 * committed message is never turned into a failure by its observer. Listeners must be thread-safe
 * and should be quick, since the in-transaction phases and {@code onGroupCommitted} hold the write
 * lock.
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

    /**
     * Where the time of one {@code apply} went, split at the moment its work began in a
     * transaction. Fires on the caller's thread right before {@link #onOutcome} or
     * {@link #onFailure} of the same call; not for calls refused before their work began (invalid
     * messages, a busy writer, a database that could not begin), nor for {@code applyAll}.
     *
     * @param inbox the inbox's name
     * @param id the business id
     * @param queued from the start of the call until its work began in the transaction: waiting
     *     for this process's writer or, under {@link CommitMode#GROUP}, for the group that took it
     *     and for the members ahead of it, and beginning the transaction
     * @param inTransaction from then until the commit or rollback returned
     */
    @Beta
    default void onTimed(String inbox, String id, Duration queued, Duration inTransaction) {}

    /**
     * A group of calls committed in one transaction, under {@link CommitMode#GROUP} only.
     *
     * @param inbox the inbox's name
     * @param size the calls the transaction took, from 1 to the group size; a member whose own
     *     work failed and was rolled back to its savepoint still counts
     */
    @Beta
    default void onGroupCommitted(String inbox, int size) {}

    /**
     * A purge finished; fires on the thread that called {@link InboxRetention#purge()} (or the
     * scheduler's), after its last batch committed. Not called for a purge that failed.
     *
     * @param inbox the inbox's name
     * @param report what the purge deleted and the horizon afterwards
     */
    @Beta
    default void onPurged(String inbox, PurgeReport report) {}
}
