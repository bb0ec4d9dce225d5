package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.jdbi.spi.JoinedTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.sqlite.SQLiteConnection;

/**
 * One joined call in a transaction the caller owns on its own connection to the inbox's file: the
 * savepoint protocol of {@link JoinedTransaction} with SQLite's claim. It does not take part in
 * group commit, since the caller's transaction commits when the caller says; while the effect runs,
 * the file's writer lock of this process is held, as for the inbox's own effects.
 *
 * <p>The claim is the caller transaction's first write unless the caller wrote before: then SQLite
 * takes the file's write lock, waiting in the busy handler for at most the inbox's busy timeout
 * (the caller's own busy timeout is put back right after the claim). A transaction that read the
 * file before another connection wrote to it cannot take the lock at all (SQLITE_BUSY_SNAPSHOT):
 * {@link SqliteErrors} reports that as busy, with what to do about it.
 */
final class SqliteJoinedTransaction extends JoinedTransaction {

    private final String file;
    private final SqliteSql sql;
    private final long busyTimeoutMillis;

    private SqliteJoinedTransaction(Handle handle, String file, SqliteSql sql, Duration busyTimeout) {
        super(handle);
        this.file = file;
        this.sql = sql;
        this.busyTimeoutMillis = busyTimeout.toMillis();
    }

    /**
     * The caller's transaction on {@code callerHandle}, which must be a connection to {@code file}
     * (the inbox's) with autocommit off. A connection found on the file once is remembered in
     * {@code onTheFile}: its main database never changes, and asking costs a query per call.
     */
    static SqliteJoinedTransaction join(
            Handle callerHandle, String file, SqliteSql sql, Duration busyTimeout, Set<Connection> onTheFile) {
        Connection connection = callerHandle.getConnection();
        try {
            JoinedTransaction.requireOpenTransaction(connection);
            if (onTheFile.contains(connection)) {
                return new SqliteJoinedTransaction(callerHandle, file, sql, busyTimeout);
            }
            String joinedFile = SqliteFiles.mainFile(connection);
            if (!SqliteFiles.same(joinedFile, file)) {
                throw new InboxException("the connection is to " + (joinedFile.isEmpty() ? "a temporary or in-memory"
                        + " database" : joinedFile) + ", but this inbox keeps its ids in " + file + "; join a"
                        + " transaction on the inbox's own file");
            }
        } catch (SQLException e) {
            throw SqliteErrors.translate(e, "reading the caller's connection");
        }
        onTheFile.add(connection);
        return new SqliteJoinedTransaction(callerHandle, file, sql, busyTimeout);
    }

    @Override
    protected RuntimeException translate(SQLException failure, String doing) {
        return SqliteErrors.translate(failure, doing);
    }

    @Override
    protected boolean noSuchSavepoint(SQLException failure) {
        return SqliteFiles.noSuchSavepoint(failure);
    }

    @Override
    protected void effectStarting() {
        WriteLocks.hold(file, handle);
    }

    @Override
    protected void effectEnded() {
        WriteLocks.release(file, handle);
    }

    @Override
    public Optional<InboxRecord> claim(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
        try {
            BusyTimeout callers = BusyTimeout.set(connection, busyTimeoutMillis);
            try {
                return insertOrRead(inbox, id, fingerprint, content, receivedAt);
            } finally {
                callers.restore();
            }
        } catch (SQLException e) {
            throw SqliteErrors.translate(e, "claiming the id");
        }
    }

    /** The connection's busy timeout, set to the inbox's for the claim and put back after it. */
    private record BusyTimeout(Connection connection, SQLiteConnection driver, long callers) {

        static BusyTimeout set(Connection connection, long millis) throws SQLException {
            SQLiteConnection driver = connection.isWrapperFor(SQLiteConnection.class)
                    ? connection.unwrap(SQLiteConnection.class) : null;
            long callers;
            try (Statement statement = connection.createStatement();
                    ResultSet rs = statement.executeQuery("PRAGMA busy_timeout")) {
                callers = rs.next() ? rs.getLong(1) : 0;
            }
            BusyTimeout timeout = new BusyTimeout(connection, driver, callers);
            timeout.apply(millis);
            return timeout;
        }

        void restore() throws SQLException {
            apply(callers);
        }

        // The driver's call sets SQLite's busy timeout directly, without a statement to prepare.
        private void apply(long millis) throws SQLException {
            if (driver != null) {
                driver.setBusyTimeout((int) Math.min(Integer.MAX_VALUE, millis));
            } else {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("PRAGMA busy_timeout = " + millis);
                }
            }
        }
    }

    private Optional<InboxRecord> insertOrRead(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) throws SQLException {
        try (PreparedStatement claim = connection.prepareStatement(sql.claim)) {
            InboxRows.bindClaim(claim, inbox, id, fingerprint, content, receivedAt, SqliteStore.TIME);
            if (claim.executeUpdate() == 1) {
                return Optional.empty();
            }
        }
        return Optional.of(InboxRows.find(connection, sql.tables, inbox, id, SqliteStore.TIME).orElseThrow(() ->
                new InboxStorageException(InboxStorageException.Kind.OTHER, "the claim of id '" + id
                        + "' found a conflicting row that then could not be read", null)));
    }

    @Override
    public void storeResult(String inbox, String id, EncodedResult result) {
        int updated;
        try (PreparedStatement update = connection.prepareStatement(sql.storeResult)) {
            InboxRows.bindResult(update, result);
            update.setString(4, inbox);
            update.setString(5, id);
            updated = update.executeUpdate();
        } catch (SQLException e) {
            throw SqliteErrors.translate(e, "storing the result");
        }
        if (updated != 1) {
            throw SqliteTransaction.noClaimedRow(id);
        }
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        try {
            return InboxRows.horizon(connection, sql.tables, inbox, SqliteStore.TIME);
        } catch (SQLException e) {
            throw SqliteErrors.translate(e, "reading the horizon");
        }
    }
}
