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
 * <h2>Effects with and without a result</h2>
 *
 * <p>An expression lambda is an {@code Effect} and its value is the result:
 * {@code inbox.apply(id, content, tx -> tx.execute(sql))} gives an {@code Outcome<Integer>} that
 * carries the row count. A statement lambda that returns nothing,
 * {@code inbox.apply(id, content, tx -> { tx.execute(sql); })}, is a {@link VoidEffect} and gives
 * an {@code Outcome<Void>}. Both are spelled {@code apply}, for one reason of the Java language:
 *
 * <ul>
 *   <li>{@code Effect} and {@code VoidEffect} side by side as unrelated interfaces would make
 *       {@code tx -> tx.execute(sql)} ambiguous. An expression lambda whose body is a method call
 *       fits a {@code void} method as well as one with a result, and for a lambda without
 *       parameter types the compiler picks the more specific overload only by subtyping
 *       (JLS 15.12.2.5).
 *   <li>So {@code Effect} extends {@code VoidEffect}: an effect with a result is also one whose
 *       result may be ignored. The {@code Effect} overload is then the more specific, and an
 *       expression lambda keeps its {@code Outcome<Integer>}, as it did before
 *       {@code VoidEffect} existed. A statement block that can finish without a value fits only
 *       {@code VoidEffect}, so it reaches the void overload, without ambiguity.
 *   <li>The reverse ({@code VoidEffect extends Effect<H, Void, X>}) would make the void overload
 *       the more specific one and turn every {@code tx -> tx.execute(sql)} into an
 *       {@code Outcome<Void>}, breaking callers that assign {@code Outcome<Integer>}.
 * </ul>
 *
 * <p>Only the three-argument {@code apply} has a void form; with an origin time, a statement
 * lambda ends with {@code return null;}. A second verb in Jdbi's manner
 * ({@code useHandle}/{@code withHandle}) would also work, but would give one operation two names.
 *
 * @param <H> the transaction handle the adapter provides (a Jdbi {@code Handle} for SQLite)
 * @param <R> what the effect returns; carried by {@link Outcome.Applied}; may be {@code null}
 * @param <X> the checked exception the effect may throw, or {@link RuntimeException}
 */
@FunctionalInterface
public interface Effect<H, R, X extends Exception> extends VoidEffect<H, X> {

    /**
     * Applies the business change.
     *
     * @param tx the open transaction, never {@code null}
     * @return the result handed back in {@link Outcome.Applied#result()}
     * @throws X passed through to the caller unchanged
     */
    R apply(H tx) throws X;

    /** Applies the business change and drops its result. */
    @Override
    default void run(H tx) throws X {
        apply(tx);
    }
}
