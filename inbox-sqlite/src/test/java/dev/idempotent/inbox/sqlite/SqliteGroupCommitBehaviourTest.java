package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.testkit.GroupCommitContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import java.nio.file.Path;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/** The group commit behaviour of SQLite inboxes, over a real file. */
class SqliteGroupCommitBehaviourTest extends GroupCommitContract {

    @TempDir
    Path directory;

    private SqliteFixture sqlite;

    @Override
    protected InboxFixture openFixture() {
        sqlite = new SqliteFixture(directory);
        return sqlite;
    }

    /** SQLite checks foreign keys only on connections opened with {@code foreign_keys} on. */
    @Override
    protected Optional<InboxBuilder<? extends Inbox<Handle>>> builderCheckingForeignKeys() {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
        config.enforceForeignKeys(true);
        SQLiteDataSource dataSource = new SQLiteDataSource(config);
        dataSource.setUrl("jdbc:sqlite:" + sqlite.file().toAbsolutePath());
        return Optional.of(SqliteInbox.builder(Jdbi.create(dataSource)).tables(sqlite.tables()));
    }
}
