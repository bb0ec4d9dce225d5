package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.InboxProperties;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The inbox's invariants on SQLite files. */
class SqliteInboxPropertiesTest extends InboxProperties {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory);
    }
}
