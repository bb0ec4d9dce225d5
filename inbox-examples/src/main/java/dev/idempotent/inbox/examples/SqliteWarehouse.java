package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;

/**
 * Opens the warehouse in one SQLite file: table {@code stock} holds a single row with the running
 * {@code total}, and the inbox's table {@code inbox_message} sits beside it in the same file, so
 * that the two change in one transaction.
 */
public final class SqliteWarehouse {

    /** The inbox name the warehouse receives shipments under. */
    public static final String INBOX = InboxWarehouse.INBOX;

    private SqliteWarehouse() {}

    /**
     * Opens (or creates) the warehouse in {@code file}, with inbox settings adjusted by {@code settings}.
     *
     * @throws IllegalArgumentException for settings the inbox's builder refuses, before the file
     *     is touched
     * @throws dev.idempotent.inbox.InboxStorageException if the file cannot hold the warehouse:
     *     read-only, not a SQLite database, or in a directory that cannot be written
     */
    public static Warehouse open(Path file, UnaryOperator<InboxBuilder<SqliteInbox>> settings) {
        Jdbi jdbi = SqliteInbox.jdbi(file);
        // The inbox first, as on PostgreSQL: a refused setting fails before the file exists, and a
        // file that cannot hold an inbox fails as the inbox's typed storage error.
        SqliteInbox inbox = settings.apply(SqliteInbox.builder(jdbi).name(INBOX)).build();
        try {
            jdbi.useHandle(handle -> {
                handle.execute("CREATE TABLE IF NOT EXISTS stock (id INTEGER PRIMARY KEY CHECK (id = 1), total INTEGER NOT NULL)");
                handle.execute("INSERT INTO stock (id, total) VALUES (1, 0) ON CONFLICT (id) DO NOTHING");
            });
        } catch (JdbiException e) {
            inbox.close();
            throw new InboxStorageException(InboxStorageException.Kind.OTHER,
                    "the stock table cannot be created in " + file + ": " + e.getMessage(), e);
        }
        return new InboxWarehouse(inbox, jdbi, inbox.settings().tables(), "SQLite " + file);
    }
}
