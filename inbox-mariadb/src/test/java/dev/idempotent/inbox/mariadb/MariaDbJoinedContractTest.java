package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.JoinedContract;

/** The joined-call contract on MariaDB, at the server's default isolation (REPEATABLE READ). */
class MariaDbJoinedContractTest extends JoinedContract {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture();
    }
}
