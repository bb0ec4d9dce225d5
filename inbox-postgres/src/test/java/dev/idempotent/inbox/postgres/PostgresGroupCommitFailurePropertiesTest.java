package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.GroupCommitProperties;
import dev.idempotent.inbox.testkit.InboxFixture;

/** Group commit with failing effects, on inboxes built with PostgreSQL's group-commit builder. */
class PostgresGroupCommitFailurePropertiesTest extends GroupCommitProperties {

    @Override
    protected InboxFixture openFixture() {
        return new PostgresFixture(true);
    }
}
