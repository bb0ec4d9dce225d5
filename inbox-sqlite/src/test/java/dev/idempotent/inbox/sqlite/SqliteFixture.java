package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.testkit.InboxFixture;
import java.nio.file.Path;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/** A real SQLite file in a test's temporary directory. */
final class SqliteFixture implements InboxFixture {

    private final Path file;
    private final Jdbi jdbi;

    SqliteFixture(Path directory) {
        this.file = directory.resolve("inbox.db");
        this.jdbi = SqliteInbox.jdbi(file);
    }

    Path file() {
        return file;
    }

    @Override
    public Jdbi jdbi() {
        return jdbi;
    }

    @Override
    public InboxBuilder<SqliteInbox> builder() {
        // A Jdbi of its own: building again opens the file anew, as a restarted process would.
        return SqliteInbox.builder(file);
    }

    @Override
    public HeldLock holdWriteLock(String inbox, String id) {
        Handle handle = jdbi.open();
        handle.execute("BEGIN IMMEDIATE");
        return () -> {
            try {
                handle.execute("ROLLBACK");
            } finally {
                handle.close();
            }
        };
    }

    @Override
    public void close() {
        // The files live in a temporary directory that the test framework or the caller removes.
    }
}
