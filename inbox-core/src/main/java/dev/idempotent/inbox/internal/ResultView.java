package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.BatchCompletion;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageEffect;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.ResultInbox;
import dev.idempotent.inbox.StoredResult;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The engine's {@link ResultInbox}: each call goes through the engine's own method with the effect
 * marked (see {@link ResultStoring}), and the engine stores the result and decodes a duplicate's.
 *
 * @param <H> the transaction handle given to effects
 * @param <R> the result type
 */
final class ResultView<H, R> implements ResultInbox<H, R> {

    private final InboxEngine<H> inbox;
    private final ResultCodec<R> codec;

    private ResultView(InboxEngine<H> inbox, ResultCodec<R> codec) {
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.codec = Objects.requireNonNull(codec, "codec");
        ResultStoring.checkType(codec.type(), codec.version());
    }

    static <H, R> ResultView<H, R> of(InboxEngine<H> inbox, ResultCodec<R> codec) {
        return new ResultView<>(inbox, codec);
    }

    @Override
    public Inbox<H> inbox() {
        return inbox;
    }

    @Override
    public ResultCodec<R> codec() {
        return codec;
    }

    @Override
    public <X extends Exception> Outcome<R> apply(String id, Content content, Instant originTime,
            Effect<H, R, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return inbox.apply(id, content, originTime, ResultStoring.effect(codec, effect));
    }

    @Override
    public <X extends Exception> PendingOutcome<R> applyJoined(H transaction, String id, Content content,
            Instant originTime, Effect<H, R, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return inbox.applyJoined(transaction, id, content, originTime, ResultStoring.effect(codec, effect));
    }

    @Override
    public <X extends Exception> List<MessageResult<R>> applyAll(List<Message> messages,
            MessageEffect<H, R, X> effect, BatchCompletion<H, R> completion) {
        Objects.requireNonNull(effect, "effect");
        return inbox.applyAll(messages, ResultStoring.messageEffect(codec, effect), completion);
    }

    @Override
    public Optional<StoredResult<R>> findResult(String id) {
        return inbox.find(id).map(record -> ResultStoring.decode(codec, record.result(), inbox.name(), id));
    }

    @Override
    public String toString() {
        return "ResultInbox[" + inbox.name() + ", " + codec.type() + " v" + codec.version() + "]";
    }
}
