package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.testing.InMemoryDatabase;
import dev.idempotent.inbox.testing.TestInbox;

/** The engine with a single writer that commits concurrent callers in groups; here mostly one at a time. */
class InboxEngineGroupCommitTest extends InboxEngineContract {

    @Override
    InboxBuilder<TestInbox> builder(InMemoryDatabase database) {
        return TestInbox.builderWithGroupCommit(database);
    }
}
