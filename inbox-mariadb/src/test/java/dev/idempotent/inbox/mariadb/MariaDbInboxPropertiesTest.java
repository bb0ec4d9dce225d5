package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.InboxProperties;
import dev.idempotent.inbox.testkit.InboxFixture;

/** The inbox invariants on MariaDB. */
class MariaDbInboxPropertiesTest extends InboxProperties {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture();
    }
}
