package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.JdbcInboxStore;
import dev.idempotent.inbox.spi.jdbc.TimeColumn;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MariaDB storage behind {@link MariaDbInbox}.
 *
 * <p>Every transaction takes a connection of its own from the user's {@link Jdbi} and gives it
 * back when it ends, so the pool (if any) decides how many calls run at once. Calls on one id are
 * serialised by InnoDB itself, on the primary key of the table of records ({@code inbox_message}
 * by default); calls on different ids run in parallel.
 *
 * <p>Every statement names the tables as the inbox's {@link InboxTables} give them: qualified with
 * the database when the inbox has one, so the tables may live in another database than the
 * connection's own. Names come only from {@code InboxTables}, which admits plain identifiers only;
 * values are always bound parameters.
 *
 * <p>The tables themselves are created or checked by {@link MariaDbSchema} while the store is built.
 */
final class MariaDbStore extends JdbcInboxStore<Handle> {

    static final Logger log = LoggerFactory.getLogger(MariaDbStore.class);

    // BIGINT epoch milliseconds: exact, and free of the session time zone in which MariaDB reads
    // and writes DATETIME values.
    static final TimeColumn TIME = TimeColumn.EPOCH_MILLIS;

    // A no-op update on conflict: unlike INSERT IGNORE, it turns no error (a truncated value, a
    // bad character) into a warning, and it takes an exclusive lock on the existing row, so a
    // claim that meets another transaction's uncommitted claim of the id waits for it to end.
    // With the affected-rows count (useAffectedRows=true) it answers 1 for an inserted row and 0
    // for one that was there; with the driver's default found-rows count both are 1, so the store
    // refuses such connections when it opens.
    final String claim;

    // A locking read, which reads the row as last committed, whatever the transaction's snapshot.
    // A plain read takes a snapshot, and even a new one can still count the transaction that
    // committed the row as running: InnoDB marks a committing transaction committed, which lets a
    // claim take the row's lock, a moment before it takes it out of the set snapshots copy.
    private final String readClaimed;

    // The row this transaction claimed; its lock is the transaction's already.
    final String storeResult;

    // Purgers serialise on the horizon row, which only moves forward. A purge commits it raised
    // before its first delete, so an apply whose claim waited for a purge to delete an old row of
    // the same id reads the raised horizon afterwards (the engine reads it after the claim), and is
    // refused as stale; raised in the delete's transaction alone, InnoDB could let that read miss it.
    final String raiseHorizon;

    // The row comparison is spelled out: MariaDB does not turn (a, b) > (x, y) into a range of the
    // index. FOR UPDATE locks the rows (under READ COMMITTED, the matching ones only) so that the
    // delete that follows removes exactly these; MySQL has no DELETE ... RETURNING.
    final String selectOldest;

    // Followed by the placeholders of the ids a purge batch selected.
    final String deleteIds;

    // The joined claim: a plain INSERT, see MariaDbJoinedTransaction.
    final String joinedClaim;

    // The joined read of the horizon: a locking read, whatever the caller's isolation level.
    final String joinedHorizon;

    // The smallest {@code max_allowed_packet} MariaDB accepts: below it, no statement needs a check.
    private static final long SMALLEST_MAX_ALLOWED_PACKET = 1024;

    // The server's max_allowed_packet as last read, 0 before the first large result; see checkResultFits.
    private volatile long maxAllowedPacket;

    private final Jdbi jdbi;
    private final Duration busyTimeout;
    private final String lockWaitTimeout;

    MariaDbStore(Jdbi jdbi, InboxSettings settings) {
        super(TIME, settings.tables());
        InboxTables tables = settings.tables();
        String messages = tables.messageTable();
        this.claim = "INSERT INTO " + messages + " (" + InboxRows.COLUMNS + ") VALUES (" + InboxRows.PLACEHOLDERS
                + ") ON DUPLICATE KEY UPDATE id = id";
        this.readClaimed = "SELECT " + InboxRows.COLUMNS + ", " + InboxRows.RESULT_COLUMNS + " FROM " + messages
                + " WHERE inbox = ? AND id = ? LOCK IN SHARE MODE";
        this.storeResult = "UPDATE " + messages + " SET result_type = ?, result_type_version = ?, result = ?"
                + " WHERE inbox = ? AND id = ?";
        this.raiseHorizon = "INSERT INTO " + tables.horizonTable() + " (inbox, horizon) VALUES (?, ?)"
                + " ON DUPLICATE KEY UPDATE horizon = GREATEST(horizon, VALUES(horizon))";
        this.selectOldest = "SELECT received_at, id FROM " + messages
                + " WHERE inbox = ? AND received_at < ? AND (received_at > ? OR (received_at = ? AND id > ?))"
                + " ORDER BY received_at, id LIMIT ? FOR UPDATE";
        this.deleteIds = "DELETE FROM " + messages + " WHERE inbox = ? AND id IN (";
        this.joinedClaim = "INSERT INTO " + messages + " (" + InboxRows.COLUMNS + ") VALUES ("
                + InboxRows.PLACEHOLDERS + ")";
        this.joinedHorizon = "SELECT horizon AS t FROM " + tables.horizonTable() + " WHERE inbox = ? LOCK IN SHARE MODE";
        // Before the first handle is opened: an effect's commit or rollback through Jdbi is refused.
        this.jdbi = EffectGuard.install(jdbi);
        this.busyTimeout = settings.busyTimeout();
        this.lockWaitTimeout = Long.toString(lockWaitSeconds(busyTimeout));
        MariaDbSchema schema = new MariaDbSchema(tables, lockWaitSeconds(busyTimeout));
        if (settings.schemaMode() == SchemaMode.CREATE) {
            // A handle of its own, which create closes: creating the tables may drop its connection.
            schema.create(open("opening the database"));
        }
        try (Handle handle = open("opening the database")) {
            if (settings.schemaMode() == SchemaMode.VALIDATE) {
                schema.validate(handle);
            }
            checkAffectedRows(handle);
        } catch (JdbiException e) {
            throw MariaDbErrors.translate(e, "closing the schema connection");
        }
    }

    /**
     * The {@code innodb_lock_wait_timeout} for a busy timeout: whole seconds, rounded up so that a
     * call never waits less than asked, and at least 1, the least MySQL takes (MariaDB would read
     * 0 as "do not wait at all", which would fail even a claim that meets a lock about to go).
     */
    static long lockWaitSeconds(Duration busyTimeout) {
        long seconds = busyTimeout.getSeconds();
        if (busyTimeout.getNano() > 0) {
            seconds++;
        }
        return Math.max(1, seconds);
    }

    @Override
    public Writers writers() {
        return Writers.CONCURRENT;
    }

    @Override
    public StoreTransaction<Handle> begin() {
        Handle handle = open("opening a connection");
        try {
            if (handle.isInTransaction()) {
                throw new InboxException("the connection the Jdbi handed out is already in a transaction (or has"
                        + " autocommit off, which Jdbi treats the same); Jdbi would silently join it, and the inbox's"
                        + " isolation level and lock wait timeout would never apply. Give the inbox a Jdbi whose"
                        + " connections come in autocommit mode with no transaction open");
            }
        } catch (RuntimeException e) {
            RuntimeException failure = e instanceof JdbiException jdbiFailure
                    ? MariaDbErrors.translate(jdbiFailure, "beginning the transaction") : e;
            discard(handle, failure);
            throw failure;
        }
        return MariaDbTransaction.begin(handle, lockWaitTimeout, this);
    }

    /** The caller's transaction on {@code callerHandle}, which must have autocommit off. */
    @Override
    public StoreTransaction<Handle> join(Handle callerHandle) {
        return MariaDbJoinedTransaction.join(callerHandle, lockWaitSeconds(busyTimeout), this);
    }

    @Override
    protected <T> T onConnection(InboxRows.Query<T> query) throws SQLException {
        return jdbi.withHandle(handle -> query.run(handle.getConnection()));
    }

    @Override
    protected InboxException translate(Exception failure, String doing) {
        return MariaDbErrors.translate(failure, doing);
    }

    /** Closes nothing: the connections belong to the user's Jdbi. */
    @Override
    public void close() {}

    private Handle open(String doing) {
        try {
            return jdbi.open();
        } catch (JdbiException e) {
            throw MariaDbErrors.translateOpening(e, doing);
        }
    }

    /** Closes a handle that failed; closing rolls back whatever it still had open. */
    static void discard(Handle handle, Throwable failure) {
        try {
            if (handle.isInTransaction()) {
                handle.rollback();
            }
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
        try {
            handle.close();
        } catch (RuntimeException e) {
            // The connection is thrown away because it is in doubt; so is its close.
            failure.addSuppressed(e);
        }
    }

    /**
     * Refuses connections whose claims could not tell an inserted row from an existing one. The
     * MariaDB and MySQL drivers by default report found rows (the CLIENT_FOUND_ROWS flag, fixed when
     * the connection is made), under which the claim of an id already stored also answers 1. The
     * probe claims one row twice in a transaction it rolls back: its second claim must answer 0.
     * The probe's inbox name is empty, which no inbox can have, and its id is the connection's, so
     * that stores opening at once do not wait for (or deadlock on) each other's probes.
     */
    private void checkAffectedRows(Handle handle) {
        try {
            handle.begin();
            handle.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
            int first = probe(handle);
            int second = probe(handle);
            handle.rollback();
            if (first != 1 || second != 0) {
                throw new InboxException("the connections report found rows instead of affected rows (the claim of"
                        + " a stored id answered " + second + " instead of 0), so the inbox could not tell a new id"
                        + " from a stored one; add useAffectedRows=true to the JDBC URL (or set the data source"
                        + " property of that name)");
            }
        } catch (RuntimeException e) {
            RuntimeException failure = e instanceof JdbiException jdbiFailure
                    ? MariaDbErrors.translate(jdbiFailure, "checking how the connection counts rows") : e;
            try {
                if (handle.isInTransaction()) {
                    handle.rollback();
                }
            } catch (RuntimeException rollbackFailure) {
                failure.addSuppressed(rollbackFailure);
            }
            if (failure instanceof InboxStorageException storage
                    && storage.kind() == InboxStorageException.Kind.READ_ONLY) {
                // Nothing can be claimed on a read-only connection anyway, and each apply says so;
                // find and the retention status still work.
                log.debug("inbox connection is read-only; the affected-rows check is skipped", e);
                return;
            }
            throw failure;
        }
    }

    private int probe(Handle handle) {
        return handle.execute("INSERT INTO " + tables().messageTable() + " (" + InboxRows.COLUMNS + ")"
                + " VALUES ('', CONCAT('probe-', CONNECTION_ID()), 0, '', 0, '', NULL, 0) ON DUPLICATE KEY UPDATE id = id");
    }

    /**
     * Reads the row a claim on {@code connection} met and holds the lock of, so it waits for
     * nothing.
     */
    InboxRecord readClaimed(Connection connection, String inbox, String id) throws SQLException {
        try (PreparedStatement read = connection.prepareStatement(readClaimed)) {
            read.setString(1, inbox);
            read.setString(2, id);
            try (ResultSet row = read.executeQuery()) {
                if (row.next()) {
                    return InboxRows.read(row, TIME);
                }
            }
        }
        throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the claim of id '" + id
                + "' met a row that then could not be read; is something deleting inbox rows?", null);
    }

    /**
     * Writes {@code result} to the row of {@code id} that {@code claimant} (a call, a transaction)
     * claimed on {@code connection}, after {@link #checkResultFits} has refused one the server would
     * not take. The caller translates an {@link SQLException} as its transaction requires.
     *
     * @throws StoredResultException if the result does not fit the server's packet; nothing is sent
     * @throws InboxStorageException if the update did not touch exactly the claimed row
     */
    void storeResult(Connection connection, String inbox, String id, EncodedResult result, String claimant)
            throws SQLException {
        try (PreparedStatement update = connection.prepareStatement(storeResult)) {
            checkResultFits(connection, inbox, id, result);
            InboxRows.bindResult(update, result);
            update.setString(4, inbox);
            update.setString(5, id);
            int updated = update.executeUpdate();
            if (updated != 1) {
                throw new InboxStorageException(InboxStorageException.Kind.OTHER, "storing the result of id '" + id
                        + "' updated " + updated + " rows instead of the one this " + claimant + " claimed; is"
                        + " something deleting inbox rows?", null);
            }
        }
    }

    /**
     * Refuses, as {@link StoredResultException.Kind#TOO_LARGE}, a result whose update would not fit
     * the server's {@code max_allowed_packet}, before it is sent. Sent, such a statement makes the
     * server drop the connection: the whole transaction is lost, so under group commit every call
     * of the group fails, and in a joined call the caller's transaction goes with it, where a result
     * too large must fail its own call alone and roll back only its savepoint.
     *
     * <p>The size is an upper bound of what the driver sends as text: each byte the driver escapes
     * ({@code '}, {@code "}, {@code \}, NUL) counted twice, every character of the strings as four
     * bytes escaped. The limit is read on the first result that could come near the smallest packet
     * a server allows, and read again on the call's own connection before a result is refused, so a
     * raised limit is honoured.
     */
    void checkResultFits(Connection connection, String inbox, String id, EncodedResult result) throws SQLException {
        if (result.bytes() == null) {
            return;
        }
        long size = storeResult.length() + 64L + 8L * (inbox.length() + id.length() + result.type().length());
        for (byte b : result.bytes()) {
            size += b == '\'' || b == '"' || b == '\\' || b == 0 ? 2 : 1;
        }
        if (size < SMALLEST_MAX_ALLOWED_PACKET) {
            return;
        }
        long known = maxAllowedPacket;
        if (known != 0 && size < known) {
            return;
        }
        long current = readMaxAllowedPacket(connection);
        maxAllowedPacket = current;
        if (size >= current) {
            throw new StoredResultException(StoredResultException.Kind.TOO_LARGE, "inbox '" + inbox + "' id '" + id
                    + "': the result (" + result.type() + " v" + result.version() + ") of " + result.bytes().length
                    + " bytes makes an update of up to " + size + " bytes, which the MariaDB server's max_allowed_packet "
                    + current + " does not take; nothing was recorded. Raise max_allowed_packet or lower"
                    + " maxResultBytes", null);
        }
    }

    private static long readMaxAllowedPacket(Connection connection) throws SQLException {
        try (PreparedStatement read = connection.prepareStatement("SELECT @@SESSION.max_allowed_packet");
                ResultSet row = read.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }
}
