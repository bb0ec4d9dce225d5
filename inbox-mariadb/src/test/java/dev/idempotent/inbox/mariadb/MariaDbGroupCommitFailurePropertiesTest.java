package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.GroupCommitProperties;
import dev.idempotent.inbox.testkit.InboxFixture;

/** Group commit with failing effects, on inboxes built with the MariaDB group-commit builder. */
class MariaDbGroupCommitFailurePropertiesTest extends GroupCommitProperties {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture(true);
    }
}
