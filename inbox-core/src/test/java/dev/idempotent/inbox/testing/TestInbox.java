package dev.idempotent.inbox.testing;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.ForwardingInbox;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.internal.InboxEngine;
import java.util.Objects;

/**
 * An inbox over an {@link InMemoryDatabase}, built the way the adapters build theirs: an
 * {@link InboxBuilder} whose factory opens a store with the settings' busy timeout and hands it to
 * {@link InboxEngine#open}.
 */
public final class TestInbox extends ForwardingInbox<InMemoryStore.Tx> {

    private final InMemoryStore store;

    private TestInbox(InboxSettings settings, InMemoryStore store) {
        super(InboxEngine.open(settings, store));
        this.store = store;
    }

    /** A builder for an inbox that runs each call in a transaction of its own, on the caller's thread. */
    public static InboxBuilder<TestInbox> builder(InMemoryDatabase database) {
        return builder(database, CommitMode.PER_CALLER);
    }

    /** A builder for an inbox that commits concurrent callers in groups. */
    public static InboxBuilder<TestInbox> builderWithGroupCommit(InMemoryDatabase database) {
        return builder(database, CommitMode.GROUP);
    }

    private static InboxBuilder<TestInbox> builder(InMemoryDatabase database, CommitMode mode) {
        Objects.requireNonNull(database, "database");
        return new InboxBuilder<>(mode, settings -> new TestInbox(settings, new InMemoryStore(database, settings.busyTimeout())));
    }

    /** The store this inbox runs on. */
    public InMemoryStore store() {
        return store;
    }
}
