package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.RetentionContract;

class PostgresRetentionContractTest extends RetentionContract {

    @Override
    protected InboxFixture openFixture() {
        return new PostgresFixture();
    }
}
