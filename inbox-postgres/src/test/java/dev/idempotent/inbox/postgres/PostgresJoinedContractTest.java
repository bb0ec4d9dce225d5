package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.JoinedContract;

/** The joined-call contract on PostgreSQL, at the database's default isolation (READ COMMITTED). */
class PostgresJoinedContractTest extends JoinedContract {

    @Override
    protected InboxFixture openFixture() {
        return new PostgresFixture();
    }
}
