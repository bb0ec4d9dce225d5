package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.GroupCommitProperties;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** Group commit with failing effects: SQLite always commits in groups. */
class SqliteGroupCommitPropertiesTest extends GroupCommitProperties {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory);
    }
}
