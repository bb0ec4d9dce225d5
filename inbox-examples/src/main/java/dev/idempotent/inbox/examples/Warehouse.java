package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Jdbi;

/**
 * The seed's warehouse: one {@code stock} row with a running {@code total}, changed only through
 * the inbox, in the inbox's transaction, in one SQLite file.
 */
public final class Warehouse implements AutoCloseable {

    /** The inbox name the warehouse receives shipments under. */
    public static final String INBOX = "warehouse";

    private final SqliteInbox inbox;
    private final Jdbi jdbi;

    private Warehouse(SqliteInbox inbox) {
        this.inbox = inbox;
        this.jdbi = inbox.jdbi();
    }

    /** Opens (or creates) the warehouse in {@code file}. */
    public static Warehouse open(Path file) {
        return open(file, UnaryOperator.identity());
    }

    /** Opens the warehouse with inbox settings adjusted by {@code settings} (listener, busy timeout, ...). */
    public static Warehouse open(Path file, UnaryOperator<InboxBuilder<SqliteInbox>> settings) {
        Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> {
            handle.execute("CREATE TABLE IF NOT EXISTS stock (id INTEGER PRIMARY KEY CHECK (id = 1), total INTEGER NOT NULL)");
            handle.execute("INSERT INTO stock (id, total) VALUES (1, 0) ON CONFLICT (id) DO NOTHING");
        });
        return new Warehouse(settings.apply(SqliteInbox.builder(jdbi).name(INBOX)).build());
    }

    /**
     * Receives one shipment: adds {@code qty} to the total once per {@code id}.
     *
     * @return Applied, Duplicate or Conflict, after the commit
     */
    public Outcome<Void> receive(String id, long qty) {
        return inbox.apply(id, Content.of(qty), tx -> {
            tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty);
            return null;
        });
    }

    /** The committed total. */
    public long total() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT total FROM stock WHERE id = 1")
                .mapTo(Long.class).one());
    }

    /** The committed number of receipts: the inbox's rows. */
    public long receipts() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM inbox_message WHERE inbox = ?")
                .bind(0, INBOX).mapTo(Long.class).one());
    }

    /** Requests and applied effects, counted apart. */
    public InboxStats stats() {
        return inbox.stats();
    }

    @Override
    public void close() {
        inbox.close();
    }
}
