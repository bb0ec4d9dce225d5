package dev.idempotent.inbox;

/**
 * A business change that returns nothing: what a statement lambda such as
 * {@code tx -> { tx.execute(...); }} is, given to {@link Inbox#apply(String, Content, VoidEffect)}.
 * It runs exactly as an {@link Effect} does, in the inbox's transaction, and its outcome is an
 * {@code Outcome<Void>} whose {@link Outcome.Applied#result()} is {@code null}.
 *
 * <p>Every {@link Effect} is also a {@code VoidEffect} that drops its result; see {@link Effect}
 * for why the two are related this way.
 *
 * @param <H> the transaction handle the adapter provides (a Jdbi {@code Handle} for SQLite)
 * @param <X> the checked exception the effect may throw, or {@link RuntimeException}
 */
@FunctionalInterface
public interface VoidEffect<H, X extends Exception> {

    /**
     * Applies the business change.
     *
     * @param tx the open transaction, never {@code null}
     * @throws X passed through to the caller unchanged
     */
    void run(H tx) throws X;
}
