package dev.idempotent.inbox;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An {@link Inbox} that hands every call to another one: the base of each adapter's inbox class
 * (which adds what only it has, such as its {@code Jdbi}), and of decorators that observe an
 * inbox. Override what you change; every method of {@link Inbox} is forwarded as it is.
 *
 * <p>{@link #storingResults} is forwarded too: the view it returns calls the delegate's methods,
 * not this inbox's overrides; a decorator that observes calls overrides it as well.
 *
 * @param <H> the transaction handle effects receive
 */
@Beta
public abstract class ForwardingInbox<H> implements Inbox<H> {

    private final Inbox<H> delegate;

    /**
     * @param delegate the inbox every call goes to; closed with this one
     */
    protected ForwardingInbox(Inbox<H> delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public <R, X extends Exception> Outcome<R> apply(
            String id, Content content, Instant originTime, Effect<H, R, X> effect) throws X {
        return delegate.apply(id, content, originTime, effect);
    }

    @Override
    public <R, X extends Exception> PendingOutcome<R> applyJoined(
            H transaction, String id, Content content, Instant originTime, Effect<H, R, X> effect) throws X {
        return delegate.applyJoined(transaction, id, content, originTime, effect);
    }

    @Override
    public <R, X extends Exception> List<MessageResult<R>> applyAll(
            List<Message> messages, MessageEffect<H, R, X> effect) {
        return delegate.applyAll(messages, effect);
    }

    @Override
    public <R, X extends Exception> List<MessageResult<R>> applyAll(
            List<Message> messages, MessageEffect<H, R, X> effect, BatchCompletion<H, R> completion) {
        return delegate.applyAll(messages, effect, completion);
    }

    @Override
    public <R> ResultInbox<H, R> storingResults(ResultCodec<R> codec) {
        return delegate.storingResults(codec);
    }

    @Override
    public InboxRetention retention() {
        return delegate.retention();
    }

    @Override
    public Optional<InboxRecord> find(String id) {
        return delegate.find(id);
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public InboxTables tables() {
        return delegate.tables();
    }

    @Override
    public InboxStats stats() {
        return delegate.stats();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
