package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxRetention;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Instant;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Jdbi;

/**
 * The warehouse in one SQLite file: table {@code stock} holds a single row with the running
 * {@code total}, and the inbox's table {@code inbox_message} sits beside it in the same file, so
 * that the two change in one transaction.
 */
public final class SqliteWarehouse implements Warehouse {

    /** The inbox name the warehouse receives shipments under. */
    public static final String INBOX = "warehouse";

    private final Path file;
    private final SqliteInbox inbox;
    private final Jdbi jdbi;

    private SqliteWarehouse(Path file, SqliteInbox inbox) {
        this.file = file;
        this.inbox = inbox;
        this.jdbi = inbox.jdbi();
    }

    /** Opens (or creates) the warehouse in {@code file}, with inbox settings adjusted by {@code settings}. */
    public static SqliteWarehouse open(Path file, UnaryOperator<InboxBuilder<SqliteInbox>> settings) {
        Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> {
            handle.execute("CREATE TABLE IF NOT EXISTS stock (id INTEGER PRIMARY KEY CHECK (id = 1), total INTEGER NOT NULL)");
            handle.execute("INSERT INTO stock (id, total) VALUES (1, 0) ON CONFLICT (id) DO NOTHING");
        });
        return new SqliteWarehouse(file, settings.apply(SqliteInbox.builder(jdbi).name(INBOX)).build());
    }

    @Override
    public Outcome<Void> receive(String id, long qty, Instant origin) {
        return inbox.apply(id, Content.of(qty), origin, tx -> {
            tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty);
            return null;
        });
    }

    @Override
    public StockLevel stock() {
        // One read transaction, so the total and the row count belong to the same commit.
        return jdbi.inTransaction(handle -> handle.createQuery(
                        "SELECT (SELECT total FROM stock WHERE id = 1) AS total,"
                                + " (SELECT COUNT(*) FROM inbox_message WHERE inbox = :inbox) AS receipts")
                .bind("inbox", INBOX)
                .map((rs, ctx) -> new StockLevel(rs.getLong("total"), rs.getLong("receipts")))
                .one());
    }

    @Override
    public InboxStats stats() {
        return inbox.stats();
    }

    @Override
    public InboxRetention retention() {
        return inbox.retention();
    }

    @Override
    public String describe() {
        return "SQLite " + file;
    }

    @Override
    public void close() {
        inbox.close();
    }
}
