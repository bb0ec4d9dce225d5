package dev.idempotent.inbox;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An idempotent inbox: the record "id X was received, with this content", committed in the same
 * database transaction as the business change it guards.
 *
 * <p>{@link #apply} opens a write transaction, claims the id, runs the effect only if the claim is
 * new, and commits. Whatever happens, one business id is applied at most once per inbox, across
 * restarts, crashes and concurrent deliveries:
 *
 * <pre>{@code
 * Outcome<Void> outcome = inbox.apply("snack-7", Content.of(7), tx -> {
 *     tx.execute("UPDATE stock SET total = total + ?", 7);
 * });
 * if (outcome.isAccepted()) {
 *     ack("snack-7"); // Applied now or applied before: both are success
 * }
 * if (outcome instanceof Outcome.Conflict<Void> conflict) {
 *     refuse("snack-7", conflict.stored());
 * }
 * }</pre>
 *
 * <p>Implementations are thread-safe: many threads may call {@code apply} on one inbox. Every
 * method may throw an {@link InboxException}; none of them ever reports an error as success.
 *
 * @param <H> the transaction handle given to effects
 */
public interface Inbox<H> extends AutoCloseable {

    /**
     * Applies {@code effect} once for {@code id}, in one transaction with the inbox record.
     *
     * <ul>
     *   <li>{@link Outcome.Applied}: the id was new; the effect ran and its writes committed
     *       together with the inbox record.
     *   <li>{@link Outcome.Duplicate}: the id was recorded earlier with the same content; the
     *       effect did not run and nothing was written. This is success: acknowledge it.
     *   <li>{@link Outcome.Conflict}: the id was recorded earlier with different content; the
     *       effect did not run and the earlier business is kept untouched.
     * </ul>
     *
     * <p>An expression lambda's value is the result: {@code tx -> tx.execute(sql)} gives an
     * {@code Outcome<Integer>} with the row count. A statement lambda without a value goes to
     * {@link #apply(String, Content, VoidEffect)} instead.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param effect the business change, run inside the transaction only for a new id
     * @return the outcome, never {@code null}; returned only after the commit that holds it
     * @throws X the effect's own exception, unchanged; nothing was recorded
     * @throws InvalidMessageException for a bad id or content; nothing was written
     * @throws InboxBusyException when the write lock was not obtained within the busy timeout;
     *     nothing was applied and the call may be retried
     * @throws OutcomeUnknownException when the commit was attempted but its result is unknown
     * @throws InboxStorageException when the database failed; nothing was applied
     */
    // The void overload beside this one is not ambiguous, although javac's lint says it may be:
    // Effect extends VoidEffect, so this overload is the more specific (see Effect).
    @SuppressWarnings("overloads")
    default <R, X extends Exception> Outcome<R> apply(String id, Content content, Effect<H, R, X> effect) throws X {
        return apply(id, content, null, effect);
    }

    /**
     * Like {@link #apply(String, Content, Effect)}, for an effect that returns nothing: a
     * statement lambda such as {@code tx -> { tx.execute(sql); }}. Runs in the same transaction,
     * with the same outcomes and exceptions; an {@link Outcome.Applied} carries a {@code null}
     * result.
     *
     * <pre>{@code
     * Outcome<Void> outcome = inbox.apply("snack-7", Content.of(7), tx -> {
     *     tx.execute("UPDATE stock SET total = total + ?", 7);
     *     tx.execute("INSERT INTO movement (item, qty) VALUES (?, ?)", "snack", 7);
     * });
     * }</pre>
     *
     * <p>There is no void form with an origin time: end the lambda with {@code return null;} and
     * call {@link #apply(String, Content, Instant, Effect)}.
     *
     * @param <X> the checked exception the effect may throw
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param effect the business change, run inside the transaction only for a new id
     * @return the outcome, never {@code null}; returned only after the commit that holds it
     * @throws X the effect's own exception, unchanged; nothing was recorded
     * @throws InvalidMessageException for a bad id or content; nothing was written
     * @throws InboxBusyException when the write lock was not obtained within the busy timeout;
     *     nothing was applied and the call may be retried
     * @throws OutcomeUnknownException when the commit was attempted but its result is unknown
     * @throws InboxStorageException when the database failed; nothing was applied
     */
    @SuppressWarnings("overloads")
    default <X extends Exception> Outcome<Void> apply(String id, Content content, VoidEffect<H, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return apply(id, content, null, tx -> {
            effect.run(tx);
            return null;
        });
    }

    /**
     * Like {@link #apply(String, Content, Effect)}, for a message that carries its origin time:
     * when the sender first created the business, the same on every resend. A message new to the
     * inbox whose origin time is so old that an earlier delivery of it may already have been
     * purged is refused with {@link StaleMessageException} instead of being applied as new (see
     * {@link InboxRetention}).
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param originTime when the sender created the business, by its clock; {@code null} when
     *     unknown, which behaves as {@link #apply(String, Content, Effect)}
     * @param effect the business change, run inside the transaction only for a new id
     * @return the outcome, never {@code null}; returned only after the commit that holds it
     * @throws X the effect's own exception, unchanged; nothing was recorded
     * @throws StaleMessageException if the message is new and older than the inbox can judge;
     *     nothing was written
     * @throws InvalidMessageException with {@link InvalidMessageException.Problem#ORIGIN_IN_FUTURE}
     *     if the origin time is later than the inbox's clock plus its clock-skew margin, whether
     *     the id is new or not; nothing was written
     */
    <R, X extends Exception> Outcome<R> apply(String id, Content content, Instant originTime, Effect<H, R, X> effect)
            throws X;

    /**
     * Applies {@code effect} once for {@code id} inside a transaction the caller owns and has
     * open, on its handle {@code transaction}: the building block of the joining forms adapters
     * offer (a Jdbi {@code Handle}, a JDBC {@code Connection}) and of framework integrations.
     *
     * <p>The claim and the effect run in a savepoint of the caller's transaction. If the effect
     * throws, the savepoint is rolled back (neither the claim nor the effect's writes remain), the
     * caller's transaction stays usable, and the exception reaches the caller unchanged. Otherwise
     * the claim and the effect's writes commit or roll back with the caller's transaction: the
     * result is a {@link PendingOutcome}, on which the caller reports its commit or rollback. The
     * inbox's commit mode does not apply: the call runs on the caller's thread, in its
     * transaction, and commits when the caller commits.
     *
     * <p>A concurrent claim of the same id in another transaction makes this call wait for that
     * transaction to end, within the busy timeout; the caller's own settings are as they were for
     * the rest of its transaction.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param transaction the handle of the caller's open transaction; not {@code null}
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param originTime when the sender created the business, or {@code null} when unknown
     * @param effect the business change, run in the caller's transaction only for a new id
     * @return the outcome, final once the caller's transaction commits
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws InvalidMessageException for a bad id or content; nothing was written
     * @throws StaleMessageException if the message is new and older than the inbox can judge
     * @throws InboxBusyException when the claim waited past the busy timeout, or the database
     *     refused it for a concurrent update (a serialization failure under REPEATABLE READ or
     *     SERIALIZABLE): nothing of the call remains, and the caller's transaction should be rolled
     *     back and retried
     * @throws EffectBrokeTransactionException if the effect committed, rolled back or aborted the
     *     transaction it was given
     * @throws InboxException if the handle is in autocommit mode or has no transaction open, or
     *     the database lacks the inbox's schema
     */
    <R, X extends Exception> PendingOutcome<R> applyJoined(
            H transaction, String id, Content content, Instant originTime, Effect<H, R, X> effect) throws X;

    /**
     * Applies a batch in one transaction, one outcome per message, in order: for consumers that
     * receive batches (a broker poll, a file). Each message is claimed and its effect run inside a
     * savepoint of its own, so a message whose effect throws (or whose id or content is invalid,
     * or which is stale) is rolled back alone and reported in its {@link MessageResult}; the others
     * commit together. A message repeated within the batch is a duplicate (or conflict) of its
     * first occurrence.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw; caught per message, never thrown here
     * @param messages the batch, in order; not {@code null}
     * @param effect the business change, run once for each message new to the inbox
     * @return one result per message, in the order given, after the commit that holds them
     * @throws InboxBusyException when the write lock was not obtained within the busy timeout;
     *     nothing of the batch was applied
     * @throws InboxStorageException when the database failed; nothing of the batch was applied
     * @throws OutcomeUnknownException when the commit of the batch was attempted but its result is
     *     unknown
     */
    default <R, X extends Exception> List<MessageResult<R>> applyAll(
            List<Message> messages, MessageEffect<H, R, X> effect) {
        return applyAll(messages, effect, (tx, results) -> { });
    }

    /**
     * Like {@link #applyAll(List, MessageEffect)}, and then, in the same transaction after the last
     * message and before the commit, runs {@code completion} with the results: a write that must
     * commit with the batch whatever its outcomes, such as a consumer's position in a broker's log,
     * commits exactly when the batch does.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw; caught per message, never thrown here
     * @param messages the batch, in order; not {@code null}
     * @param effect the business change, run once for each message new to the inbox
     * @param completion run once inside the transaction after the last message; not {@code null}
     * @return one result per message, in the order given, after the commit that holds them
     * @throws InboxBusyException when the write lock was not obtained within the busy timeout;
     *     nothing of the batch was applied
     * @throws InboxStorageException when the database failed; nothing of the batch was applied
     * @throws OutcomeUnknownException when the commit of the batch was attempted but its result is
     *     unknown
     * @throws RuntimeException what {@code completion} threw, unchanged; nothing of the batch was
     *     applied
     */
    <R, X extends Exception> List<MessageResult<R>> applyAll(
            List<Message> messages, MessageEffect<H, R, X> effect, BatchCompletion<H, R> completion);

    /**
     * A view of this inbox that stores each effect's result, encoded by {@code codec}, with its
     * record, so that a duplicate carries the first call's result: see {@link ResultInbox}. Costs
     * nothing until used; views of one inbox may have different codecs.
     *
     * @param <R> the result type
     * @param codec how results are stored and read; not {@code null}
     * @return the view
     * @throws IllegalArgumentException if the codec's type name is not 1 to 100 characters without
     *     control characters, or its version is negative
     */
    @Beta
    <R> ResultInbox<H, R> storingResults(ResultCodec<R> codec);

    /**
     * Purging rows older than the retention, the persisted horizon, and their status; see
     * {@link InboxRetention}.
     *
     * @return this inbox's retention, never {@code null}
     */
    InboxRetention retention();

    /**
     * Looks up what this inbox recorded for {@code id}, for support staff and audits. Reads
     * committed data only, outside any write transaction.
     *
     * @param id the business id
     * @return the record, or empty when the id was never applied (or its row was purged)
     * @throws InvalidMessageException for a bad id
     * @throws InboxStorageException when the database cannot be read
     */
    Optional<InboxRecord> find(String id);

    /**
     * {@return the name that keeps this inbox's ids apart from other inboxes in the same database}
     */
    String name();

    /**
     * Where this inbox keeps its tables: the prefix and schema it was built with (see
     * {@link InboxBuilder#tables(InboxTables)}). For what works beside the inbox on its tables, such
     * as a broker consumer that keeps its positions in the inbox's table of offsets, and for tests
     * and tools that read the tables. Reads no database.
     *
     * @return the inbox's table names, never {@code null}; {@link InboxTables#defaults()} unless
     *     the inbox was built with others
     */
    @Beta
    InboxTables tables();

    /** {@return a snapshot of this instance's counters since it was built}; cheap, never blocks. */
    InboxStats stats();

    /**
     * Releases the connections this inbox holds. The database and its records stay; a closed
     * inbox refuses further calls with an {@link InboxException}.
     */
    @Override
    void close();
}
