package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.RetentionContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

class SqliteRetentionContractTest extends RetentionContract {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory);
    }
}
