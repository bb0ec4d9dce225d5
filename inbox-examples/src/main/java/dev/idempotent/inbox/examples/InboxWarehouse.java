package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxRetention;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import java.time.Instant;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * The warehouse over any inbox adapter: table {@code stock} holds a single row with the running
 * {@code total}, changed only by the inbox's effect, in the inbox's transaction. The SQL is the
 * same on SQLite and PostgreSQL; only opening the database differs. The inbox's rows are read from
 * the table its settings name ({@code inbox_message} unless they chose others).
 */
final class InboxWarehouse implements Warehouse {

    /** The inbox name the warehouse receives shipments under. */
    static final String INBOX = "warehouse";

    private final Inbox<Handle> inbox;
    private final Jdbi jdbi;
    private final String readStock;
    private final String description;

    /** {@code tables} are the inbox's own, as it was built with them. */
    InboxWarehouse(Inbox<Handle> inbox, Jdbi jdbi, InboxTables tables, String description) {
        this.inbox = inbox;
        this.jdbi = jdbi;
        // One statement reads one snapshot, so the total and the row count belong to the same commit.
        this.readStock = "SELECT (SELECT total FROM stock WHERE id = 1) AS total,"
                + " (SELECT COUNT(*) FROM " + tables.messageTable() + " WHERE inbox = :inbox) AS receipts";
        this.description = description;
    }

    @Override
    public Outcome<Void> receive(String id, long qty, Instant origin) {
        return inbox.apply(id, Warehouse.content(qty), origin, tx -> {
            Warehouse.addToStock(tx, qty);
            return null;
        });
    }

    @Override
    public Inbox<Handle> inbox() {
        return inbox;
    }

    @Override
    public StockLevel stock() {
        return jdbi.withHandle(handle -> handle.createQuery(readStock)
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
        return description;
    }

    @Override
    public void close() {
        inbox.close();
    }
}
