package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
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
 * One joined call in a transaction the caller owns on its own connection to the inbox's file: a
 * savepoint, the claim, the effect with the caller's handle, and the savepoint's release or
 * rollback. It never commits, rolls back or purges; it does not take part in group commit, since
 * the caller's transaction commits when the caller says.
 *
 * <p>The claim is the caller transaction's first write unless the caller wrote before: then SQLite
 * takes the file's write lock, waiting in the busy handler for at most the inbox's busy timeout
 * (the caller's own busy timeout is put back right after the claim). A transaction that read the
 * file before another connection wrote to it cannot take the lock at all (SQLITE_BUSY_SNAPSHOT):
 * {@link SqliteErrors} reports that as busy, with what to do about it.
 */
final class SqliteJoinedTransaction extends JoinedTransaction {

    private static final String SAVEPOINT = "inbox_joined";
    private static final String CLAIM = "INSERT INTO inbox_message (" + InboxRows.COLUMNS + ") VALUES ("
            + InboxRows.PLACEHOLDERS + ") ON CONFLICT (inbox, id) DO NOTHING";

    private final Handle handle;
    private final Connection connection;
    private final String file;
    private final long busyTimeoutMillis;
    private EffectGuard effectGuard;
    private boolean broken;

    private SqliteJoinedTransaction(Handle handle, String file, Duration busyTimeout) {
        this.handle = handle;
        this.connection = handle.getConnection();
        this.file = file;
        this.busyTimeoutMillis = busyTimeout.toMillis();
    }

    /**
     * The caller's transaction on {@code callerHandle}, which must be a connection to {@code file}
     * (the inbox's) with autocommit off. A connection found on the file once is remembered in
     * {@code onTheFile}: its main database never changes, and asking costs a query per call.
     */
    static SqliteJoinedTransaction join(
            Handle callerHandle, String file, Duration busyTimeout, Set<Connection> onTheFile) {
        Connection connection = callerHandle.getConnection();
        try {
            JoinedTransaction.requireOpenTransaction(connection);
            if (onTheFile.contains(connection)) {
                return new SqliteJoinedTransaction(callerHandle, file, busyTimeout);
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
        return new SqliteJoinedTransaction(callerHandle, file, busyTimeout);
    }

    @Override
    public void savepoint() {
        execute("SAVEPOINT " + SAVEPOINT, "opening the joined call's savepoint");
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
        try (PreparedStatement claim = connection.prepareStatement(CLAIM)) {
            InboxRows.bindClaim(claim, inbox, id, fingerprint, content, receivedAt, SqliteStore.TIME);
            if (claim.executeUpdate() == 1) {
                return Optional.empty();
            }
        }
        return Optional.of(InboxRows.find(connection, inbox, id, SqliteStore.TIME).orElseThrow(() ->
                new InboxStorageException(InboxStorageException.Kind.OTHER, "the claim of id '" + id
                        + "' found a conflicting row that then could not be read", null)));
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        try {
            return InboxRows.horizon(connection, inbox, SqliteStore.TIME);
        } catch (SQLException e) {
            throw SqliteErrors.translate(e, "reading the horizon");
        }
    }

    @Override
    public Handle handle() {
        if (effectGuard == null) {
            WriteLocks.hold(file, handle);
            effectGuard = EffectGuard.enter(handle);
        }
        return handle;
    }

    /** Ends the effect's guards; whether the effect tried to end its transaction through Jdbi. */
    private boolean effectDone() {
        if (effectGuard == null) {
            return false;
        }
        WriteLocks.release(file, handle);
        boolean attempted = effectGuard.exit();
        effectGuard = null;
        return attempted;
    }

    @Override
    public void releaseSavepoint() {
        boolean attempted = effectDone();
        boolean open;
        try {
            open = !connection.getAutoCommit();
        } catch (SQLException e) {
            throw SqliteErrors.translate(e, "reading the caller's connection");
        }
        if (attempted || !open) {
            broken = !open;
            throw broken();
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("RELEASE " + SAVEPOINT);
        } catch (SQLException e) {
            if (SqliteFiles.noSuchSavepoint(e)) {
                // The savepoint went with the transaction: the effect committed or rolled it back.
                broken = true;
                EffectBrokeTransactionException failure = broken();
                failure.addSuppressed(e);
                throw failure;
            }
            throw SqliteErrors.translate(e, "releasing the joined call's savepoint");
        }
    }

    private static EffectBrokeTransactionException broken() {
        return new EffectBrokeTransactionException("the effect committed or rolled back the caller's transaction it"
                + " was given (or tried to); whatever it committed stays committed, claim included, and whatever it"
                + " rolled back is gone with the claim. An effect must not end the transaction it runs in", null);
    }

    @Override
    public void rollbackToSavepoint() {
        effectDone();
        if (broken) {
            // The effect ended the transaction the savepoint was in; there is nothing to roll back to.
            return;
        }
        // ROLLBACK TO keeps the savepoint open; RELEASE ends it with nothing left in it.
        execute("ROLLBACK TO " + SAVEPOINT + "; RELEASE " + SAVEPOINT, "rolling back the joined call's savepoint");
    }

    private void execute(String sql, String doing) {
        try (Statement statement = connection.createStatement()) {
            statement.executeUpdate(sql);
        } catch (SQLException e) {
            throw SqliteErrors.translate(e, doing);
        }
    }


}
