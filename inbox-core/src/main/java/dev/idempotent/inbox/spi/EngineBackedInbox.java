package dev.idempotent.inbox.spi;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxRetention;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageEffect;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The base of an adapter's public inbox class: every {@link Inbox} method answered by an
 * {@link InboxEngine}, and retention by an {@link InboxPurger}. Designed for extension: an adapter
 * adds its factories and what only it has (its {@code Jdbi}, for instance).
 *
 * @param <H> the transaction handle effects receive
 */
public abstract class EngineBackedInbox<H> implements Inbox<H> {

    private final InboxEngine<H> engine;
    private final InboxRetention retention;

    /**
     * @param engine the engine over the adapter's store; closed with this inbox
     * @param retentionStore the same store's retention operations
     */
    protected EngineBackedInbox(InboxEngine<H> engine, RetentionStore retentionStore) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.retention = new InboxPurger(engine, retentionStore);
    }

    @Override
    public final <R, X extends Exception> Outcome<R> apply(
            String id, Content content, Instant originTime, Effect<H, R, X> effect) throws X {
        return engine.apply(id, content, originTime, effect);
    }

    @Override
    public final <R, X extends Exception> List<MessageResult<R>> applyAll(
            List<Message> messages, MessageEffect<H, R, X> effect) {
        return engine.applyAll(messages, effect);
    }

    @Override
    public final InboxRetention retention() {
        return retention;
    }

    @Override
    public final Optional<InboxRecord> find(String id) {
        return engine.find(id);
    }

    @Override
    public final String name() {
        return engine.name();
    }

    @Override
    public final InboxStats stats() {
        return engine.stats();
    }

    /** {@return the settings this inbox was built with} */
    public final InboxSettings settings() {
        return engine.settings();
    }

    @Override
    public void close() {
        engine.close();
    }
}
