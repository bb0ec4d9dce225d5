package dev.idempotent.inbox.testkit;

import dev.idempotent.inbox.InboxTables;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * The seed's business state: a running {@code total} of received quantities, one row per stock
 * name so that many scenarios can share a database. Portable SQL, for every adapter.
 */
public final class Stock {

    private final Jdbi jdbi;
    private final String name;

    private Stock(Jdbi jdbi, String name) {
        this.jdbi = jdbi;
        this.name = name;
    }

    /**
     * Creates the stock table if needed and a row {@code name} with total 0.
     *
     * @param jdbi the database
     * @param name the stock row's name, new in that database
     * @return the stock
     */
    public static Stock create(Jdbi jdbi, String name) {
        jdbi.useHandle(handle -> {
            handle.execute("CREATE TABLE IF NOT EXISTS stock (name VARCHAR(100) PRIMARY KEY, total BIGINT NOT NULL)");
            handle.execute("INSERT INTO stock (name, total) VALUES (?, 0)", name);
        });
        return new Stock(jdbi, name);
    }

    /**
     * The effect of one receipt: adds {@code qty} to the total inside the inbox's transaction.
     *
     * @param tx the inbox's transaction handle
     * @param qty the quantity received
     * @return the number of rows updated, always 1
     * @throws IllegalStateException if the stock row is missing
     */
    public int add(Handle tx, long qty) {
        int updated = tx.execute("UPDATE stock SET total = total + ? WHERE name = ?", qty, name);
        if (updated != 1) {
            throw new IllegalStateException("stock row '" + name + "' is missing");
        }
        return updated;
    }

    /** {@return the committed total}, read through a connection of its own. */
    public long total() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT total FROM stock WHERE name = ?")
                .bind(0, name)
                .mapTo(Long.class)
                .one());
    }

    /**
     * The committed number of rows of inbox {@code inbox} in the table of records of the fixture's
     * inboxes ({@link InboxFixture#tables()}), read through a connection of its own.
     *
     * @param fixture the fixture whose database and tables to read
     * @param inbox the inbox's name
     * @return the number of rows
     */
    public static long inboxRows(InboxFixture fixture, String inbox) {
        return inboxRows(fixture.jdbi(), fixture.tables(), inbox);
    }

    /**
     * The committed number of rows of inbox {@code inbox} in the table of records named by
     * {@code tables}, read through a connection of its own.
     *
     * @param jdbi the database
     * @param tables the names of the inbox's tables
     * @param inbox the inbox's name
     * @return the number of rows
     */
    public static long inboxRows(Jdbi jdbi, InboxTables tables, String inbox) {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM " + tables.messageTable()
                        + " WHERE inbox = ?")
                .bind(0, inbox)
                .mapTo(Long.class)
                .one());
    }

    /**
     * The committed number of rows of inbox {@code inbox} in the table of records of the default
     * names ({@link InboxTables#defaults()}), read through a connection of its own.
     *
     * @param jdbi the database
     * @param inbox the inbox's name
     * @return the number of rows
     */
    public static long inboxRows(Jdbi jdbi, String inbox) {
        return inboxRows(jdbi, InboxTables.defaults(), inbox);
    }
}
