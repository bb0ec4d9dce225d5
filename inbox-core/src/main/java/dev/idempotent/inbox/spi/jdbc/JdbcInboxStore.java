package dev.idempotent.inbox.spi.jdbc;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.spi.InboxStore;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;

/**
 * The base of a JDBC store: it answers the reads outside write transactions ({@link #find},
 * {@link #horizon}, {@link #oldestReceivedAt}) the same way for every database, through the two
 * hooks a store supplies: a connection to read on, and the translation of its database's errors
 * into the inbox's exceptions. The store implements the rest of {@link InboxStore}.
 *
 * @param <H> the transaction handle effects receive
 */
@Beta
public abstract class JdbcInboxStore<H> implements InboxStore<H> {

    private final TimeColumn time;
    private final InboxTables tables;

    /**
     * @param time how the store's time columns hold an instant
     * @param tables where the inbox's tables are
     */
    protected JdbcInboxStore(TimeColumn time, InboxTables tables) {
        this.time = time;
        this.tables = tables;
    }

    /** {@return where the inbox's tables are} */
    public final InboxTables tables() {
        return tables;
    }

    /**
     * Runs {@code query} on a connection outside any write transaction of the inbox, and gives
     * the connection back afterwards.
     *
     * @param <T> what the query returns
     * @param query the read
     * @return what it read
     * @throws SQLException if the database failed
     */
    protected abstract <T> T onConnection(InboxRows.Query<T> query) throws SQLException;

    /**
     * The inbox's exception for a failure of this store's database, which happened while
     * {@code doing} (a phrase such as "reading the horizon").
     *
     * @param failure what the driver, the pool or a library on top of them threw
     * @param doing what the store was doing
     * @return the exception to throw: busy, storage (of the matching kind) or another
     *     {@link InboxException}
     */
    protected abstract InboxException translate(Exception failure, String doing);

    @Override
    public final Optional<InboxRecord> find(String inbox, String id) {
        return read(connection -> InboxRows.find(connection, tables, inbox, id, time), "reading the inbox record");
    }

    @Override
    public final Optional<Instant> horizon(String inbox) {
        return read(connection -> InboxRows.horizon(connection, tables, inbox, time), "reading the horizon");
    }

    @Override
    public final Optional<Instant> oldestReceivedAt(String inbox) {
        return read(connection -> InboxRows.oldestReceivedAt(connection, tables, inbox, time), "reading the oldest row");
    }

    private <T> T read(InboxRows.Query<T> query, String doing) {
        try {
            return onConnection(query);
        } catch (InboxException e) {
            throw e;
        } catch (SQLException | RuntimeException e) {
            // A pool or Jdbi reports the database's failures as unchecked exceptions of its own.
            throw translate(e, doing);
        }
    }
}
