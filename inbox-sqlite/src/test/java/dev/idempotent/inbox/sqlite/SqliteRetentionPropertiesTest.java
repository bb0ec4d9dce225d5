package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.RetentionProperties;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The retention invariants on SQLite files, under a random clock. */
class SqliteRetentionPropertiesTest extends RetentionProperties {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory);
    }
}
