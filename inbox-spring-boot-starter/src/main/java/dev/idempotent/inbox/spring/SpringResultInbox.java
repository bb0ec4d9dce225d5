package dev.idempotent.inbox.spring;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.StoredResult;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.jdbi.JdbiResultInbox;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * A {@link SpringInbox} that stores each effect's result with its record, so that a retry gets the
 * first call's answer: {@link SpringInbox#storingResults} gives it.
 *
 * <pre>{@code
 * SpringResultInbox<Confirmation> orders = springInbox.storingResults(confirmations);
 *
 * @Transactional
 * public Confirmation place(Order order) {
 *     Outcome<Confirmation> outcome = orders.apply(order.id(), Content.of(order), tx -> book(order));
 *     return outcome.fold(Outcome.Applied::result, duplicate -> duplicate.result().value(), conflict -> null);
 * }
 * }</pre>
 *
 * <p>A call joins the Spring-managed transaction of the calling thread, or opens one, exactly as
 * {@link SpringInbox#apply(String, Content, Effect)} says (the same transactions refused, the same
 * JPA flush and rollback-only marking, the same counting after the commit). The effect's result,
 * encoded by the {@link #codec()}, is written in that transaction with the claim, so it commits or
 * rolls back with the caller's work: after a rollback nothing is stored and a retry runs the effect
 * again. A {@link Outcome.Duplicate} carries the stored result, decoded.
 *
 * <p>An encoded result larger than the inbox's {@code maxResultBytes} ({@code inbox.max-result-bytes})
 * fails the call with a {@link StoredResultException} after the effect ran; the call's savepoint
 * is rolled back, so nothing of it remains, and thrown out of a {@code @Transactional} method it
 * rolls the caller's transaction back too. Thread-safe.
 *
 * @param <R> the result type
 */
@Beta
public final class SpringResultInbox<R> {

    private final SpringInbox spring;
    private final JdbiResultInbox<R> view;

    SpringResultInbox(SpringInbox spring, JdbiResultInbox<R> view) {
        this.spring = Objects.requireNonNull(spring, "spring");
        this.view = Objects.requireNonNull(view, "view");
    }

    /** {@return the result view this applies through}, for lookups and calls outside Spring's transactions */
    public JdbiResultInbox<R> inbox() {
        return view;
    }

    /** {@return the codec results are stored and read with} */
    public ResultCodec<R> codec() {
        return view.codec();
    }

    /**
     * Applies {@code effect} once for {@code id}, in the caller's Spring-managed transaction or one
     * of its own, storing its result with the record.
     *
     * @param <X> the checked exception the effect may throw
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param effect the business change, run only for a new id; what it returns is stored
     * @return the outcome, final when this call opened the transaction, final once the caller's
     *     transaction commits otherwise; a duplicate carries the stored result
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws StoredResultException if the encoded result is over the size limit (nothing of the
     *     call remains), or a duplicate's stored result is of another type, of a version the codec
     *     does not decode, or unreadable
     * @throws InboxException as {@link SpringInbox#apply(String, Content, Effect)} says
     */
    public <X extends Exception> Outcome<R> apply(String id, Content content, Effect<Handle, R, X> effect) throws X {
        return apply(id, content, null, effect);
    }

    /**
     * As {@link #apply(String, Content, Effect)}, for a message that carries its origin time, as
     * {@link SpringInbox#apply(String, Content, Instant, Effect)} describes.
     *
     * @param <X> the checked exception the effect may throw
     * @param id the business id
     * @param content what "the same business" means for this id
     * @param originTime when the sender created the business, or {@code null} when unknown
     * @param effect the business change, run only for a new id; what it returns is stored
     * @return the outcome, as {@link #apply(String, Content, Effect)} says
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws StoredResultException as {@link #apply(String, Content, Effect)} says
     */
    public <X extends Exception> Outcome<R> apply(String id, Content content, Instant originTime,
            Effect<Handle, R, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return spring.apply(effect, (connection, call) -> view.applyIn(connection, id, content, originTime, call),
                () -> view.apply(id, content, originTime, effect));
    }

    /**
     * The result stored for {@code id}, as {@link JdbiResultInbox#findResult} reads it: committed
     * data only, on a connection of the inbox's own, not in the caller's transaction.
     *
     * @param id the business id
     * @return the stored result, {@link StoredResult#none()} for a record without one, or empty
     *     when the inbox has no record of {@code id}
     * @throws StoredResultException if the stored result is of another type name, of a version the
     *     codec does not decode, or unreadable
     * @throws dev.idempotent.inbox.InboxStorageException when the database cannot be read
     */
    public Optional<StoredResult<R>> findResult(String id) {
        return view.findResult(id);
    }

    @Override
    public String toString() {
        return "SpringResultInbox[" + view + "]";
    }
}
