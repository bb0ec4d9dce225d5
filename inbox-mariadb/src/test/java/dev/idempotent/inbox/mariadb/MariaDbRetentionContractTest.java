package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.RetentionContract;
import dev.idempotent.inbox.testkit.InboxFixture;

/** The retention contract on MariaDB. */
class MariaDbRetentionContractTest extends RetentionContract {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture();
    }
}
