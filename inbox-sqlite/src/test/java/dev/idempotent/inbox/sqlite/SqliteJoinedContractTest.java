package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.JoinedContract;
import java.nio.file.Path;
import java.sql.Connection;
import org.junit.jupiter.api.io.TempDir;

/** The joined-call contract on a real SQLite file. */
class SqliteJoinedContractTest extends JoinedContract {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory);
    }

    /** Writers queue for the file's one write lock: two transactions never both hold a claim. */
    @Override
    protected boolean claimsCanDeadlock() {
        return false;
    }

    /** SQLite is serializable, and a transaction that writes sees the latest commit or is refused. */
    @Override
    protected void repeatableRead(Connection connection) {}
}
