package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.StoreContract;
import java.nio.file.Path;
import java.time.Duration;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.io.TempDir;

/** The store contract for {@link SqliteStore}, over a real SQLite file. */
class SqliteStoreContractTest extends StoreContract {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        return new SqliteFixture(directory);
    }

    @Override
    protected InboxStore<Handle> openStore(Duration busyTimeout) {
        // A Jdbi of its own: the fixture's renders the testkit's table name, the store's must not.
        SqliteFixture sqlite = (SqliteFixture) fixture;
        return new SqliteStore(SqliteInbox.jdbi(sqlite.file()), busyTimeout, SchemaMode.CREATE, sqlite.tables());
    }

    @Override
    protected InboxStore.Writers declaredWriters() {
        return InboxStore.Writers.ONE;
    }
}
