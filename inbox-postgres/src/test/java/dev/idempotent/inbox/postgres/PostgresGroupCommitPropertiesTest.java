package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.InboxProperties;

class PostgresGroupCommitPropertiesTest extends InboxProperties {

    @Override
    protected InboxFixture openFixture() {
        return new PostgresFixture(true);
    }
}
