package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;

/** The inbox contract on MariaDB, one transaction per caller. */
class MariaDbInboxContractTest extends InboxContract {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture();
    }
}
