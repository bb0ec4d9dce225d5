package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.testing.InMemoryDatabase;
import dev.idempotent.inbox.testing.TestInbox;

/** The engine with one transaction per call, on the caller's thread. */
class InboxEngineSerialTest extends InboxEngineContract {

    @Override
    InboxBuilder<TestInbox> builder(InMemoryDatabase database) {
        return TestInbox.builder(database);
    }
}
