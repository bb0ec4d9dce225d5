package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.RetentionProperties;
import dev.idempotent.inbox.testkit.InboxFixture;

/** The retention invariants on MariaDB, under a random clock. */
class MariaDbRetentionPropertiesTest extends RetentionProperties {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture();
    }
}
