package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The whole contract again, for an inbox whose callers each run their own transaction in turn. */
class SqlitePerCallerContractTest extends InboxContract {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory, CommitMode.PER_CALLER);
    }
}
