package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.util.function.UnaryOperator;

/**
 * The seed's warehouse: a running stock {@code total}, changed only through an idempotent inbox,
 * in the inbox's transaction.
 *
 * <p>This is the seam between the HTTP receiver and the database: the receiver, the demo and the
 * tests only see this interface, so another database can be added beside {@link SqliteWarehouse}
 * without touching them (see {@link WarehouseDatabase}). Implementations are thread-safe.
 */
public interface Warehouse extends AutoCloseable {

    /** Opens (or creates) the SQLite warehouse in {@code file}. */
    static Warehouse open(Path file) {
        return SqliteWarehouse.open(file, UnaryOperator.identity());
    }

    /**
     * Opens the SQLite warehouse in {@code file} with its inbox settings adjusted by
     * {@code settings} (a listener, the busy timeout, ...).
     */
    static Warehouse open(Path file, UnaryOperator<InboxBuilder<SqliteInbox>> settings) {
        return SqliteWarehouse.open(file, settings);
    }

    /**
     * Receives one shipment: adds {@code qty} to the total once per {@code id}, in one
     * transaction with the inbox record.
     *
     * @return Applied, Duplicate or Conflict, returned only after the commit
     * @throws dev.idempotent.inbox.InboxException as {@link dev.idempotent.inbox.Inbox#apply}
     *     throws it; none of them means the shipment was received
     */
    Outcome<Void> receive(String id, long qty);

    /** The committed total and the number of receipts, read together. */
    StockLevel stock();

    /** The committed total. */
    default long total() {
        return stock().total();
    }

    /** The committed number of receipts: the inbox's rows. */
    default long receipts() {
        return stock().receipts();
    }

    /** Requests and applied effects of this instance, counted apart. */
    InboxStats stats();

    /** Where the warehouse keeps its data, for messages to people. */
    String describe();

    @Override
    void close();
}
