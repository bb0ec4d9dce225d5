package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

class SqliteInboxContractTest extends InboxContract {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory);
    }
}
