package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.RetentionProperties;

/** The retention invariants on PostgreSQL, under a random clock. */
class PostgresRetentionPropertiesTest extends RetentionProperties {

    @Override
    protected InboxFixture openFixture() {
        return new PostgresFixture();
    }
}
