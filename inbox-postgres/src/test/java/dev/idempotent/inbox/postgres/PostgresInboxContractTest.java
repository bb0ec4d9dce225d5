package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;

class PostgresInboxContractTest extends InboxContract {

    @Override
    protected InboxFixture openFixture() {
        return new PostgresFixture();
    }
}
