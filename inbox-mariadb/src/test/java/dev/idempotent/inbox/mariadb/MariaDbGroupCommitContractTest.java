package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;

/** The whole contract again, for an inbox that commits concurrent callers together. */
class MariaDbGroupCommitContractTest extends InboxContract {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture(true);
    }
}
