package dev.idempotent.inbox;

/**
 * The business change an {@link Inbox} applies once per id.
 *
 * <p>The effect runs inside the inbox's own transaction, on the same connection that records the
 * id, so every write it makes through {@code tx} commits or rolls back together with the inbox
 * row. It must not commit, roll back or close {@code tx}, and must not keep it after returning.
 *
 * <p>An exception thrown by the effect reaches the caller of {@link Inbox#apply} unchanged; the
 * transaction is rolled back, nothing is recorded, and a later delivery of the same id can still
 * be applied.
 *
 * @param <H> the transaction handle the adapter provides (a Jdbi {@code Handle} for SQLite)
 * @param <R> what the effect returns; carried by {@link Outcome.Applied}; may be {@code null}
 * @param <X> the checked exception the effect may throw, or {@link RuntimeException}
 */
@FunctionalInterface
public interface Effect<H, R, X extends Exception> {

    /**
     * Applies the business change.
     *
     * @param tx the open transaction, never {@code null}
     * @return the result handed back in {@link Outcome.Applied#result()}
     * @throws X passed through to the caller unchanged
     */
    R apply(H tx) throws X;
}
