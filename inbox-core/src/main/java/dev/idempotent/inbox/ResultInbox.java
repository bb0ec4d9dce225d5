package dev.idempotent.inbox;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * An inbox that stores each effect's result with its record, so that a retry gets the first
 * call's answer: {@link Inbox#storingResults} gives it. A new id's effect runs as in
 * {@link Inbox}, and its result, encoded by the {@link #codec()}, is stored in the same
 * transaction as the claim (after the effect; in a batch or a joined call, before the message's
 * savepoint is released). A duplicate's {@link Outcome.Duplicate#result()} then carries it,
 * decoded:
 *
 * <pre>{@code
 * ResultInbox<Handle, Confirmation> orders = inbox.storingResults(confirmations);
 * Outcome<Confirmation> outcome = orders.apply(id, Content.of(order), tx -> book(tx, order));
 * Confirmation answer = outcome.fold(Outcome.Applied::result, duplicate -> duplicate.result().value(),
 *         conflict -> null);
 * }</pre>
 *
 * <p>Besides what {@link Inbox#apply} throws, a call throws {@link StoredResultException} when the
 * encoded result is larger than {@link InboxSettings#maxResultBytes()} (rolled back: nothing
 * recorded) and when a duplicate's stored result is of another type name, of a version the codec
 * does not decode, or unreadable (nothing written). A record applied without storing a result has
 * {@link StoredResult#none()}. Thread-safe, like the inbox it views; closing the inbox ends it.
 *
 * @param <H> the transaction handle given to effects
 * @param <R> the result type
 */
@Beta
public interface ResultInbox<H, R> {

    /** {@return the inbox this view applies through} */
    Inbox<H> inbox();

    /** {@return the codec results are stored and read with} */
    ResultCodec<R> codec();

    /**
     * Applies {@code effect} once for {@code id}, as {@link Inbox#apply(String, Content, Effect)},
     * storing its result with the record.
     *
     * @param <X> the checked exception the effect may throw
     * @param id the business id
     * @param content what "the same business" means for this id
     * @param effect the business change; what it returns is stored
     * @return the outcome; a duplicate carries the stored result, decoded
     * @throws X the effect's own exception, unchanged; nothing was recorded
     * @throws StoredResultException as the class comment says
     */
    default <X extends Exception> Outcome<R> apply(String id, Content content, Effect<H, R, X> effect) throws X {
        return apply(id, content, null, effect);
    }

    /**
     * As {@link Inbox#apply(String, Content, Instant, Effect)}, storing the effect's result with
     * the record.
     *
     * @param <X> the checked exception the effect may throw
     * @param id the business id
     * @param content what "the same business" means for this id
     * @param originTime when the sender created the business, or {@code null} when unknown
     * @param effect the business change; what it returns is stored
     * @return the outcome; a duplicate carries the stored result, decoded
     * @throws X the effect's own exception, unchanged; nothing was recorded
     * @throws StoredResultException as the class comment says
     */
    <X extends Exception> Outcome<R> apply(String id, Content content, Instant originTime, Effect<H, R, X> effect)
            throws X;

    /**
     * As {@link Inbox#applyJoined}, storing the effect's result in the call's savepoint of the
     * caller's transaction; it commits or rolls back with the caller's transaction.
     *
     * @param <X> the checked exception the effect may throw
     * @param transaction the handle of the caller's open transaction; not {@code null}
     * @param id the business id
     * @param content what "the same business" means for this id
     * @param originTime when the sender created the business, or {@code null} when unknown
     * @param effect the business change; what it returns is stored
     * @return the outcome, final once the caller's transaction commits
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws StoredResultException as the class comment says; nothing of the call remains
     */
    <X extends Exception> PendingOutcome<R> applyJoined(
            H transaction, String id, Content content, Instant originTime, Effect<H, R, X> effect) throws X;

    /**
     * As {@link Inbox#applyAll(List, MessageEffect)}, storing each new message's result in its
     * savepoint. A message whose result is too large, or whose duplicate's stored result cannot be
     * decoded, fails alone with a {@link StoredResultException} in its {@link MessageResult}.
     *
     * @param <X> the checked exception the effect may throw; caught per message
     * @param messages the batch, in order; not {@code null}
     * @param effect the business change, run once for each message new to the inbox
     * @return one result per message, in the order given, after the commit that holds them
     */
    default <X extends Exception> List<MessageResult<R>> applyAll(List<Message> messages, MessageEffect<H, R, X> effect) {
        return applyAll(messages, effect, (tx, results) -> { });
    }

    /**
     * As {@link Inbox#applyAll(List, MessageEffect, BatchCompletion)}, storing each new message's
     * result in its savepoint.
     *
     * @param <X> the checked exception the effect may throw; caught per message
     * @param messages the batch, in order; not {@code null}
     * @param effect the business change, run once for each message new to the inbox
     * @param completion run once inside the transaction after the last message; not {@code null}
     * @return one result per message, in the order given, after the commit that holds them
     */
    <X extends Exception> List<MessageResult<R>> applyAll(
            List<Message> messages, MessageEffect<H, R, X> effect, BatchCompletion<H, R> completion);

    /**
     * Looks up the result stored for {@code id}, decoded; reads committed data only, as
     * {@link Inbox#find} does (which gives the whole record, with the result as stored).
     *
     * @param id the business id
     * @return empty when the id was never applied (or its row was purged); {@link StoredResult#none()}
     *     when it was applied without storing a result; otherwise the decoded result
     * @throws StoredResultException if the stored result is of another type name, of a version the
     *     codec does not decode, or unreadable
     * @throws InvalidMessageException for a bad id
     * @throws InboxStorageException when the database cannot be read
     */
    Optional<StoredResult<R>> findResult(String id);
}
