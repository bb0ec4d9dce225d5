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
 * <p>{@link #storingResults} is not forwarded: its view calls this inbox's own methods, so an
 * override of them applies to calls that store results too. Such an override must hand the
 * effect it was given to the delegate unchanged (observe around the call, not inside the effect):
 * the effect of a call that stores its result is marked for the engine, and a wrapped one fails
 * with nothing recorded.
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
    public InboxStats stats() {
        return delegate.stats();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
