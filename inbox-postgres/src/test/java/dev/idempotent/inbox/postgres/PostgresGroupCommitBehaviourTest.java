package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.GroupCommitContract;
import dev.idempotent.inbox.testkit.InboxFixture;

/** The group commit behaviour of PostgreSQL inboxes, in a schema of their own on the test server. */
class PostgresGroupCommitBehaviourTest extends GroupCommitContract {

    @Override
    protected InboxFixture openFixture() {
        // The default builder: the contract chooses the commit mode of each inbox itself.
        return new PostgresFixture();
    }
}
