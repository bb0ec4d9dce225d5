package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.ResultContract;

/** The stored results' contract on MariaDB, on the fixture's renamed tables in a database of their own. */
class MariaDbResultContractTest extends ResultContract {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture();
    }
}
