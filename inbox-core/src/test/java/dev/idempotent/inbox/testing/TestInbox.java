package dev.idempotent.inbox.testing;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.spi.EngineBackedInbox;
import dev.idempotent.inbox.spi.InboxEngine;
import java.util.Objects;

/**
 * An inbox over an {@link InMemoryDatabase}, built the way the adapters build theirs: an
 * {@link InboxBuilder} whose factory opens a store with the settings' busy timeout and wraps it in
 * an {@link InboxEngine}.
 */
public final class TestInbox extends EngineBackedInbox<InMemoryStore.Tx> {

    private final InMemoryStore store;

    private TestInbox(InboxEngine<InMemoryStore.Tx> engine, InMemoryStore store) {
        super(engine, store);
        this.store = store;
    }

    /** A builder for an inbox that runs each call in a transaction of its own, on the caller's thread. */
    public static InboxBuilder<TestInbox> builder(InMemoryDatabase database) {
        Objects.requireNonNull(database, "database");
        return new InboxBuilder<>(settings -> open(database, settings, false));
    }

    /** A builder for an inbox that commits concurrent callers in groups. */
    public static InboxBuilder<TestInbox> builderWithGroupCommit(InMemoryDatabase database) {
        Objects.requireNonNull(database, "database");
        return new InboxBuilder<>(settings -> open(database, settings, true));
    }

    private static TestInbox open(InMemoryDatabase database, InboxSettings settings, boolean groupCommit) {
        InMemoryStore store = new InMemoryStore(database, settings.busyTimeout());
        InboxEngine<InMemoryStore.Tx> engine = groupCommit
                ? InboxEngine.withGroupCommit(settings, store) : new InboxEngine<>(settings, store);
        return new TestInbox(engine, store);
    }

    /** The store this inbox runs on. */
    public InMemoryStore store() {
        return store;
    }
}
