package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.JoinedContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The joined-call contract on a real SQLite file. */
class SqliteJoinedContractTest extends JoinedContract {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory);
    }
}
