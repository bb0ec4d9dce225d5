package dev.idempotent.inbox.testkit;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.time.Instant;
import org.jdbi.v3.core.Jdbi;

/**
 * One real database that an adapter's contract run works in, and the adapter's way to open
 * inboxes over it. Each adapter's test sources provide a small implementation.
 */
public interface InboxFixture extends AutoCloseable {

    /** {@return a Jdbi over the database}, for the business tables the contract creates and reads. */
    Jdbi jdbi();

    /**
     * A builder for an inbox over the database, as the adapter's users obtain one. Each call may
     * open new connections, so that building again behaves like a restarted process.
     *
     * @return a builder with default settings
     */
    InboxBuilder<? extends JdbiInbox> builder();

    /**
     * Where the inboxes of {@link #builder()} keep their tables: the names the suites read rows
     * by (row counts, what a purge kept). A fixture whose builder sets
     * {@link InboxBuilder#tables(InboxTables)} returns the same names here.
     *
     * @return the tables; {@link InboxTables#defaults()} unless overridden
     */
    default InboxTables tables() {
        return InboxTables.defaults();
    }

    /**
     * Makes another connection hold what {@code apply(id, ...)} on inbox {@code inbox} must wait
     * for (SQLite: the database's write lock; PostgreSQL: an uncommitted claim of the id) until the
     * returned lock is closed. Returns once the lock is held.
     *
     * @param inbox the inbox's name
     * @param id the business id
     * @return the held lock; close it to release
     */
    HeldLock holdWriteLock(String inbox, String id);

    /**
     * Writes {@code count} inbox rows of inbox {@code inbox} directly, with ids {@code prefix0},
     * {@code prefix1}, ... and receive time {@code receivedAt}, as fast as the database allows: the
     * setup of retention scenarios. The inbox schema must exist (build an inbox once first).
     *
     * @param inbox the inbox's name
     * @param prefix the start of every id
     * @param count how many rows
     * @param receivedAt the receive time of every row
     */
    void insertReceivedRows(String inbox, String prefix, int count, Instant receivedAt);

    /**
     * Whether a statement that fails inside a transaction leaves the whole transaction aborted, so
     * that nothing in it can commit (PostgreSQL), rather than failing that statement alone (SQLite).
     *
     * @return true if a failed statement aborts the transaction; false by default
     */
    default boolean failedStatementAbortsTransaction() {
        return false;
    }

    /** Drops what the fixture created. */
    @Override
    void close();

    /** A lock held by another connection; closing it releases the lock without committing. */
    interface HeldLock extends AutoCloseable {
        @Override
        void close();
    }
}
