package dev.idempotent.inbox.jdbi;

import dev.idempotent.inbox.BatchCompletion;
import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageEffect;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.ResultInbox;
import dev.idempotent.inbox.StoredResult;
import java.sql.Connection;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * A {@link JdbiInbox} that stores each effect's result with its record, as {@link ResultInbox}
 * describes, with the joining forms of {@link JdbiInbox}: {@code applyIn} on a caller's Jdbi
 * handle or JDBC connection stores the result in the call's savepoint of the caller's
 * transaction, where it commits or rolls back with the caller's work. Given by
 * {@link JdbiInbox#storingResults}.
 *
 * @param <R> the result type
 */
@Beta
public final class JdbiResultInbox<R> implements ResultInbox<Handle, R> {

    private final JdbiInbox inbox;
    private final ResultInbox<Handle, R> view;

    JdbiResultInbox(JdbiInbox inbox, ResultInbox<Handle, R> view) {
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.view = Objects.requireNonNull(view, "view");
    }

    @Override
    public JdbiInbox inbox() {
        return inbox;
    }

    @Override
    public ResultCodec<R> codec() {
        return view.codec();
    }

    @Override
    public <X extends Exception> Outcome<R> apply(String id, Content content, Instant originTime,
            Effect<Handle, R, X> effect) throws X {
        return view.apply(id, content, originTime, effect);
    }

    @Override
    public <X extends Exception> PendingOutcome<R> applyJoined(Handle transaction, String id, Content content,
            Instant originTime, Effect<Handle, R, X> effect) throws X {
        return view.applyJoined(transaction, id, content, originTime, effect);
    }

    @Override
    public <X extends Exception> List<MessageResult<R>> applyAll(List<Message> messages,
            MessageEffect<Handle, R, X> effect, BatchCompletion<Handle, R> completion) {
        return view.applyAll(messages, effect, completion);
    }

    @Override
    public Optional<StoredResult<R>> findResult(String id) {
        return view.findResult(id);
    }

    /**
     * As {@link JdbiInbox#applyIn(Handle, String, Content, Effect)}, storing the effect's result
     * in the caller's transaction.
     *
     * @param <X> the checked exception the effect may throw
     * @param transaction a handle with a transaction open; not {@code null}
     * @param id the business id
     * @param content what "the same business" means for this id
     * @param effect the business change; what it returns is stored
     * @return the outcome, final once the caller's transaction commits; a duplicate carries the
     *     stored result, decoded
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws dev.idempotent.inbox.StoredResultException as {@link ResultInbox} says
     */
    public <X extends Exception> Outcome<R> applyIn(Handle transaction, String id, Content content,
            Effect<Handle, R, X> effect) throws X {
        return applyIn(transaction, id, content, (Instant) null, effect);
    }

    /**
     * As {@link JdbiInbox#applyIn(Handle, String, Content, Instant, Effect)}, storing the effect's
     * result in the caller's transaction.
     *
     * @param <X> the checked exception the effect may throw
     * @param transaction a handle with a transaction open; not {@code null}
     * @param id the business id
     * @param content what "the same business" means for this id
     * @param originTime when the sender created the business, or {@code null} when unknown
     * @param effect the business change; what it returns is stored
     * @return the outcome, final once the caller's transaction commits
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     */
    public <X extends Exception> Outcome<R> applyIn(Handle transaction, String id, Content content,
            Instant originTime, Effect<Handle, R, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return inbox.joinedIn(transaction, handle -> view.applyJoined(handle, id, content, originTime, effect));
    }

    /**
     * As {@link JdbiInbox#applyIn(Connection, String, Content, Effect)}, storing the effect's
     * result in the caller's transaction.
     *
     * @param <X> the checked exception the effect may throw
     * @param transaction a connection with autocommit off; not {@code null}; left open
     * @param id the business id
     * @param content what "the same business" means for this id
     * @param effect the business change; what it returns is stored
     * @return the outcome, pending the caller's commit
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     */
    public <X extends Exception> PendingOutcome<R> applyIn(Connection transaction, String id, Content content,
            Effect<Handle, R, X> effect) throws X {
        return applyIn(transaction, id, content, (Instant) null, effect);
    }

    /**
     * As {@link JdbiInbox#applyIn(Connection, String, Content, Instant, Effect)}, storing the
     * effect's result in the caller's transaction.
     *
     * @param <X> the checked exception the effect may throw
     * @param transaction a connection with autocommit off; not {@code null}; left open
     * @param id the business id
     * @param content what "the same business" means for this id
     * @param originTime when the sender created the business, or {@code null} when unknown
     * @param effect the business change; what it returns is stored
     * @return the outcome, pending the caller's commit
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     */
    public <X extends Exception> PendingOutcome<R> applyIn(Connection transaction, String id, Content content,
            Instant originTime, Effect<Handle, R, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return inbox.joinedIn(transaction, handle -> view.applyJoined(handle, id, content, originTime, effect));
    }

    @Override
    public String toString() {
        return view.toString();
    }
}
