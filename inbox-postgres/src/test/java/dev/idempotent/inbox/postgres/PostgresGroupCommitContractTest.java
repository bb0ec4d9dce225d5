package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;

/** The whole contract again, for an inbox that commits concurrent callers together. */
class PostgresGroupCommitContractTest extends InboxContract {

    @Override
    protected InboxFixture openFixture() {
        return new PostgresFixture(true);
    }
}
