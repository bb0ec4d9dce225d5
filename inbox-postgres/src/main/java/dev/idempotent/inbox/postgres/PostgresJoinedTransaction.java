package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
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
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * One joined call in a transaction the caller owns: the savepoint protocol of {@link
 * JoinedTransaction}, with the claim of {@link PostgresTransaction} and PostgreSQL's details. The
 * call's {@code SAVEPOINT} travels in front of the claim, in its round trip, and a stored result's
 * {@code UPDATE} in front of the savepoint's release, in its round trip, which the server runs only
 * if exactly one row took the result (see {@link PostgresTransaction}). The caller's isolation
 * level applies; the claim alone waits at most the busy timeout.
 */
final class PostgresJoinedTransaction extends JoinedTransaction {

    private static final String INVALID_SAVEPOINT = "3B001";

    // A joined claim waits at most the busy timeout, and the caller's transaction keeps its own
    // lock_timeout for everything else: the caller's value is kept in a setting of the inbox's own
    // before the claim and put back after it, in the claim's round trip. If the claim fails, the
    // rollback to the savepoint undoes both settings.
    private static final String SAVED_LOCK_TIMEOUT = "inbox.caller_lock_timeout";
    private static final String RESTORE_LOCK_TIMEOUT =
            "SELECT set_config('lock_timeout', current_setting('" + SAVED_LOCK_TIMEOUT + "'), true)";

    // pgjdbc's own connection under the pool's wrapper, for the transaction state it tracks; null
    // for another driver, whose state a statement must ask for.
    private final BaseConnection driver;
    private final PostgresStatements statements;
    private final String lockTimeout;
    private String unsentSavepoint;
    // A result whose UPDATE waits for the savepoint's release, behind which it travels.
    private PostgresTransaction.PendingResult pendingResult;

    private PostgresJoinedTransaction(
            Handle handle, BaseConnection driver, PostgresStatements statements, String lockTimeout) {
        super(handle);
        this.driver = driver;
        this.statements = statements;
        this.lockTimeout = lockTimeout;
    }

    /**
     * The caller's open transaction on {@code callerHandle}, for one joined call, whose claim waits
     * at most {@code lockTimeout}.
     */
    static PostgresJoinedTransaction join(Handle callerHandle, PostgresStatements statements, String lockTimeout) {
        Connection connection = callerHandle.getConnection();
        BaseConnection driver;
        try {
            JoinedTransaction.requireOpenTransaction(connection);
            driver = connection.isWrapperFor(BaseConnection.class) ? connection.unwrap(BaseConnection.class) : null;
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, "reading the caller's transaction state");
        }
        if (driver != null && driver.getTransactionState() == TransactionState.FAILED) {
            throw new InboxException("the caller's transaction is aborted (one of its statements failed), so"
                    + " nothing more can happen in it; roll it back (or back to a savepoint of yours) first");
        }
        return new PostgresJoinedTransaction(callerHandle, driver, statements, lockTimeout);
    }

    @Override
    protected RuntimeException translate(SQLException failure, String doing) {
        return PostgresErrors.translate(failure, doing, connection);
    }

    @Override
    protected boolean noSuchSavepoint(SQLException failure) {
        return INVALID_SAVEPOINT.equals(failure.getSQLState());
    }

    @Override
    protected void sendSavepoint(String sql) {
        // The engine always follows the savepoint with the claim, which carries it.
        unsentSavepoint = sql;
    }

    /** {@code sql} with the savepoint in front of it, if it still waits to be sent. */
    private String first(String sql) {
        if (unsentSavepoint == null) {
            return sql;
        }
        String text = unsentSavepoint + "; " + sql;
        unsentSavepoint = null;
        return text;
    }

    @Override
    protected void flush() {
        sendPendingResult();
        if (unsentSavepoint != null) {
            try {
                execute(first("SELECT 1"));
            } catch (SQLException e) {
                throw translate(e, "opening the joined call's savepoint");
            }
        }
    }

    @Override
    protected boolean transactionEnded() throws SQLException {
        // After a commit or rollback with autocommit off, pgjdbc is idle until the next statement;
        // after one, a release of the savepoint tells.
        return connection.getAutoCommit() || driver != null && driver.getTransactionState() == TransactionState.IDLE;
    }

    /**
     * Refuses to release the savepoint when a statement failed since it began: PostgreSQL has then
     * aborted the transaction. Only an effect can get here, by catching a failed statement and
     * returning normally.
     */
    @Override
    protected void checkNotAborted() {
        if (isAborted()) {
            throw new EffectBrokeTransactionException("a statement of the effect failed and the effect went on;"
                    + " PostgreSQL aborted the transaction, so nothing of it can commit. It was rolled back to the"
                    + " inbox's savepoint, and your transaction is usable again; nothing was recorded. Run a"
                    + " statement that may fail inside a savepoint of the effect's own", effectFailures.last());
        }
    }

    private boolean isAborted() {
        if (driver != null) {
            return driver.getTransactionState() == TransactionState.FAILED;
        }
        // Not pgjdbc's own connection: ask the server, which refuses any statement in an aborted transaction.
        try (Statement probe = connection.createStatement()) {
            probe.execute("SELECT 1");
            return false;
        } catch (SQLException e) {
            if (PostgresErrors.IN_FAILED_SQL_TRANSACTION.equals(e.getSQLState())) {
                return true;
            }
            throw PostgresErrors.translate(e, "reading the transaction's state");
        }
    }

    @Override
    protected void rollBackTo(String name) throws SQLException {
        // Never sent: the rollback would have undone it.
        pendingResult = null;
        if (unsentSavepoint != null) {
            // Never sent: nothing of the call reached the server.
            unsentSavepoint = null;
            return;
        }
        // This also lifts the abort that a failed statement since the savepoint left on the whole
        // transaction, so the caller's transaction is usable again.
        execute("ROLLBACK TO SAVEPOINT " + name + "; RELEASE SAVEPOINT " + name);
    }

    @Override
    public Optional<InboxRecord> claim(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
        try {
            // Two rounds at most: a row that blocked the claim and then vanished before the read
            // can only be a purge racing with this call; claiming again settles it.
            sendPendingResult();
            for (int round = 0; round < 2; round++) {
                String sql = first("SELECT set_config('" + SAVED_LOCK_TIMEOUT + "', current_setting('lock_timeout'),"
                        + " true), set_config('lock_timeout', '" + lockTimeout + "', true); "
                        + statements.claim + "; " + RESTORE_LOCK_TIMEOUT);
                if (PostgresStatements.sendClaim(connection, sql, inbox, id, fingerprint, content, receivedAt)) {
                    return Optional.empty();
                }
                Optional<InboxRecord> stored =
                        InboxRows.find(connection, statements.tables(), inbox, id, PostgresStore.TIME);
                if (stored.isPresent()) {
                    return stored;
                }
            }
            throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the claim of id '" + id
                    + "' met a row that then could not be read, twice; is something deleting inbox rows?", null);
        } catch (SQLException | JdbiException e) {
            throw PostgresErrors.translate(e, "claiming the id");
        }
    }

    /**
     * Stores the result in the caller's transaction, inside the call's savepoint. A transaction the
     * effect ended or left aborted is refused first, so the result never lands in a transaction of
     * its own; the release of the savepoint that follows the failure says the rest. The statement
     * waits for the release of the savepoint, in whose round trip it goes; on a connection that is
     * not pgjdbc's own it is sent at once.
     */
    @Override
    public void storeResult(String inbox, String id, EncodedResult result) {
        try {
            if (transactionEnded()) {
                throw new EffectBrokeTransactionException("the caller's transaction ended while the effect ran (the"
                        + " effect committed or rolled it back, or the database rolled it back for an error the effect"
                        + " caught), so the result of id '" + id + "' has no transaction to be stored in. An effect"
                        + " must not end the transaction it runs in", effectFailures.last());
            }
            checkNotAborted();
            flush();
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, "storing the result", connection);
        }
        pendingResult = new PostgresTransaction.PendingResult(inbox, id, result);
        if (driver == null) {
            sendPendingResult();
        }
    }

    /** Sends a waiting result on its own, with its row count checked here. */
    private void sendPendingResult() {
        PostgresTransaction.PendingResult pending = pendingResult;
        if (pending != null) {
            pendingResult = null;
            pending.send(connection, statements);
        }
    }

    /**
     * The release, with a waiting result's {@code UPDATE} in front of it. If the result was not
     * stored, the release never ran and the savepoint is there for the rollback to it that follows.
     */
    @Override
    protected void sendRelease(String sql) throws SQLException {
        PostgresTransaction.PendingResult pending = pendingResult;
        if (pending == null) {
            execute(sql);
            return;
        }
        pendingResult = null;
        try {
            PostgresStatements.storeResultThen(connection, statements.storeResultChecked + "; " + sql, pending.inbox(),
                    pending.id(), pending.result());
        } catch (SQLException e) {
            if (noSuchSavepoint(e)) {
                throw e; // the savepoint went with the transaction: the protocol says so by name
            }
            throw PostgresStatements.resultFailure(e, pending.id(), connection);
        }
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        sendPendingResult();
        try (PreparedStatement read = connection.prepareStatement(first(statements.horizonProbe))) {
            read.setString(1, inbox);
            PostgresStore.TIME.bind(read, 2, Instant.EPOCH);
            read.setString(3, inbox);
            boolean rows = read.execute();
            while (!rows) {
                if (read.getUpdateCount() == -1) {
                    throw new SQLException("the horizon's read answered no rows");
                }
                rows = read.getMoreResults();
            }
            try (ResultSet row = read.getResultSet()) {
                return row.next() ? Optional.ofNullable(PostgresStore.TIME.read(row, "t")) : Optional.empty();
            }
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, "reading the horizon");
        }
    }
}
