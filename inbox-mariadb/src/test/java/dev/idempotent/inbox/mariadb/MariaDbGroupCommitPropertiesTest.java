package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.InboxProperties;
import dev.idempotent.inbox.testkit.InboxFixture;

/** The inbox invariants on MariaDB, for inboxes that commit concurrent callers together. */
class MariaDbGroupCommitPropertiesTest extends InboxProperties {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture(true);
    }
}
