package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.ResultContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The stored results' contract on a real SQLite file. */
class SqliteResultContractTest extends ResultContract {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory);
    }
}
