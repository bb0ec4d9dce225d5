package dev.idempotent.inbox;

/**
 * The outcome of a message applied inside a transaction the caller owns
 * ({@link Inbox#applyJoined}): decided in that transaction, and only as final as its commit.
 *
 * <pre>{@code
 * connection.setAutoCommit(false);
 * PendingOutcome<Void> pending = inbox.applyIn(connection, "snack-7", Content.of(7), tx -> { ... });
 * connection.commit();
 * Outcome<Void> outcome = pending.committed(); // now it is final: acknowledge it
 * }</pre>
 *
 * <p>The inbox counts the outcome, and tells its listener, only when the caller reports the commit
 * with {@link #committed()}; after {@link #rolledBack()} it counts nothing. The outcome to
 * acknowledge comes from {@code committed()}, so a caller cannot take it for final before its own
 * commit without asking for {@link #uncommitted()} by name.
 *
 * <p>Implemented by the inbox; thread-safe.
 *
 * @param <R> what the effect returns
 */
public interface PendingOutcome<R> {

    /** {@return the message's business id} */
    String id();

    /**
     * The outcome as the caller's transaction sees it, before that transaction ended: an
     * {@link Outcome.Applied} here is undone if the transaction rolls back. For decisions inside
     * the transaction (skip the rest of the work on a duplicate, say), never for an acknowledgement.
     *
     * @return the outcome decided in the caller's transaction
     */
    Outcome<R> uncommitted();

    /**
     * Reports that the caller's transaction committed and returns the now final outcome. The first
     * call counts it in {@link Inbox#stats()} and tells the listener; later calls return the same
     * outcome and count nothing.
     *
     * @return the outcome, final
     * @throws IllegalStateException if {@link #rolledBack()} was reported before
     */
    Outcome<R> committed();

    /**
     * Reports that the caller's transaction rolled back: the claim and the effect's writes are gone,
     * nothing is counted, and delivering the message again applies it. Calling it again does nothing.
     *
     * @throws IllegalStateException if {@link #committed()} was reported before
     */
    void rolledBack();
}
