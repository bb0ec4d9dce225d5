package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.ResultContract;

/** The stored results' contract on PostgreSQL, on the fixture's renamed tables in a schema of their own. */
class PostgresResultContractTest extends ResultContract {

    @Override
    protected InboxFixture openFixture() {
        return new PostgresFixture();
    }
}
