package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.testkit.GroupCommitContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/** The group commit behaviour of MariaDB inboxes, in a database of their own on the test server. */
class MariaDbGroupCommitBehaviourTest extends GroupCommitContract {

    @Override
    protected InboxFixture openFixture() {
        // The default builder: the contract chooses the commit mode of each inbox itself.
        return new MariaDbFixture();
    }

    /** InnoDB checks every foreign key at once, per statement: none can wait for the commit. */
    @Override
    protected Optional<InboxBuilder<? extends Inbox<Handle>>> builderCheckingForeignKeys() {
        return Optional.empty();
    }
}
