package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxRetention;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Instant;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Handle;

/**
 * The seed's warehouse: a running stock {@code total}, changed only through an idempotent inbox,
 * in the inbox's transaction.
 *
 * <p>This is the seam between the HTTP receiver and the database: the receiver, the demo and the
 * tests only see this interface. {@link SqliteWarehouse} and {@link PostgresWarehouse} open it on
 * either database (see {@link WarehouseDatabase}). Thread-safe.
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
    default Outcome<Void> receive(String id, long qty) {
        return receive(id, qty, null);
    }

    /**
     * Receives one shipment that carries its origin time: when the sender first created it, the
     * same on every resend. A shipment new to the warehouse whose origin time is older than the
     * inbox can judge is refused (see {@link InboxRetention}).
     *
     * @param origin the origin time, or {@code null} when the sender gave none
     * @return Applied, Duplicate or Conflict, returned only after the commit
     * @throws dev.idempotent.inbox.StaleMessageException if the shipment is new and its origin
     *     time is before the horizon plus the clock-skew margin; nothing changed
     * @throws dev.idempotent.inbox.InboxException as {@link dev.idempotent.inbox.Inbox#apply}
     *     throws it; none of them means the shipment was received
     */
    Outcome<Void> receive(String id, long qty, Instant origin);

    /**
     * The inbox shipments are received through, for receivers that drive it themselves: a broker
     * consumer that applies a batch in one transaction. Its effect must be {@link #addToStock} and
     * its content {@link #content}, as {@link #receive} has them, so that a shipment received both
     * ways is one business.
     */
    Inbox<Handle> inbox();

    /** The content a shipment of {@code qty} is recorded with: its quantity. */
    static Content content(long qty) {
        return Content.of(qty);
    }

    /** The stock change of one shipment, inside the inbox's transaction {@code tx}. */
    static void addToStock(Handle tx, long qty) {
        tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty);
    }

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

    /** The inbox's purge, horizon and retention figures. */
    InboxRetention retention();

    /** Where the warehouse keeps its data, for messages to people. */
    String describe();

    @Override
    void close();
}
