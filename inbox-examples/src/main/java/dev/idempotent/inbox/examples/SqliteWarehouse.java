package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Jdbi;

/**
 * Opens the warehouse in one SQLite file: table {@code stock} holds a single row with the running
 * {@code total}, and the inbox's table {@code inbox_message} sits beside it in the same file, so
 * that the two change in one transaction.
 */
public final class SqliteWarehouse {

    /** The inbox name the warehouse receives shipments under. */
    public static final String INBOX = InboxWarehouse.INBOX;

    private SqliteWarehouse() {}

    /** Opens (or creates) the warehouse in {@code file}, with inbox settings adjusted by {@code settings}. */
    public static Warehouse open(Path file, UnaryOperator<InboxBuilder<SqliteInbox>> settings) {
        Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> {
            handle.execute("CREATE TABLE IF NOT EXISTS stock (id INTEGER PRIMARY KEY CHECK (id = 1), total INTEGER NOT NULL)");
            handle.execute("INSERT INTO stock (id, total) VALUES (1, 0) ON CONFLICT (id) DO NOTHING");
        });
        SqliteInbox inbox = settings.apply(SqliteInbox.builder(jdbi).name(INBOX)).build();
        return new InboxWarehouse(inbox, jdbi, "SQLite " + file);
    }
}
