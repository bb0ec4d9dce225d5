package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.jdbi.spi.FailedStatements;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * One READ COMMITTED transaction on a connection of its own, given back when it ends. (A joined
 * call, in a transaction the caller owns, is {@link PostgresJoinedTransaction}.)
 *
 * <p>The inbox's own statements run as plain JDBC on the handle's connection. Statements that
 * return nothing and need not be answered on their own wait and travel in front of the next
 * one, in its round trip: the transaction's {@code BEGIN} with its isolation level and lock
 * timeout, and each savepoint, which the engine always follows with a claim. A call then costs
 * the round trips a hand-written transaction costs (claim, effect, commit). A release is sent
 * at once: an effect may leave the transaction aborted, and only a release answered on its own
 * blames that on the message it belongs to.
 *
 * <p>A stored result goes the other way: its {@code UPDATE} waits, once the effect's transaction
 * has been checked, and travels in front of what follows it, the {@code COMMIT} or the message's
 * savepoint release, so that storing a result costs no round trip of its own. The server runs
 * what stands behind the {@code UPDATE} only if exactly one row took the result ({@link
 * PostgresStatements#storeResultChecked}); otherwise the transaction stays open, aborted, and the
 * call fails as it would have with the {@code UPDATE} sent alone. Only a connection lost during
 * that round trip leaves the outcome unknown, as it would during a {@code COMMIT} sent alone.
 *
 * <p>The inbox sends its {@code BEGIN} itself, on a connection still in autocommit mode, rather
 * than leave it to the driver: pgjdbc sends its own {@code BEGIN} as a query of the simple
 * protocol, which the server answers, and flushes, apart from the statements behind it, so the
 * first round trip of every transaction would wake the caller's thread twice. Once the server
 * has answered the text that carried the {@code BEGIN}, or failed it, Jdbi begins the handle's
 * transaction, which turns autocommit off without a statement; from then on the handle is in a
 * transaction as any Jdbi transaction is, and is committed or rolled back as one. Should Jdbi
 * fail to begin, the transaction is rolled back at once, so that the connection never goes back
 * to a pool with a transaction open that neither Jdbi nor the pool knows of.
 */
final class PostgresTransaction implements StoreTransaction<Handle> {

    private final Handle handle;
    private final Connection connection;
    private final PostgresStatements statements;
    // pgjdbc's own connection under the pool's wrapper, for the transaction state it tracks; null
    // for another driver, whose state a statement must ask for.
    private final BaseConnection driver;
    private final FailedStatements effectFailures;
    private final StringBuilder unsent;
    // The BEGIN and the claim as one text, made once per store: while the BEGIN alone waits (a
    // lone message's claim), the claim goes out as this, and the driver finds its parsed and
    // server-prepared form by a string whose hash it has already computed.
    private final String beginThenClaim;
    private boolean onlyBeginUnsent;
    // The inbox's own transaction: whether its BEGIN still waits in unsent, and whether it went out
    // in the text being sent, after whose answer Jdbi begins the transaction.
    private boolean beginUnsent;
    private boolean beginUnanswered;
    private EffectGuard effectGuard;
    // A result whose UPDATE waits for the COMMIT or the release behind which it travels.
    private PendingResult pendingResult;
    private int savepoints;
    private boolean ended;
    private boolean broken;

    /** A result to store on the row of {@code id}, not yet sent. */
    record PendingResult(String inbox, String id, EncodedResult result) {
        /** Sends the result on its own, with its row count checked, as the transaction on {@code connection}. */
        void send(Connection connection, PostgresStatements statements) {
            try {
                statements.storeResult(connection, inbox, id, result);
            } catch (SQLException e) {
                throw PostgresErrors.translate(e, "storing the result", connection);
            }
        }
    }

    /** How the inbox's own transactions begin, as sent, made once per store. */
    record Begin(String statements, String thenClaim) {
        /** {@return {@code statements}, and the store's claim with them in front of it} */
        static Begin of(String statements, PostgresStatements store) {
            return new Begin(statements, statements + "; " + store.claim);
        }
    }

    /**
     * The inbox's own transaction on {@code handle}, which must be in autocommit mode with no
     * transaction open; nothing is sent until its first statement.
     *
     * @param readWrite how a transaction begins ({@link PostgresStore#begin})
     * @param readOnly how it begins where the driver would begin it read-only: on a connection set
     *     read-only, unless pgjdbc's {@code readOnlyMode} is {@code ignore}
     */
    static PostgresTransaction own(Handle handle, PostgresStatements statements, Begin readWrite, Begin readOnly) {
        Connection connection = handle.getConnection();
        BaseConnection driver = driver(connection, "opening a connection");
        boolean hintReadOnly;
        try {
            hintReadOnly = driver != null ? driver.hintReadOnly() : connection.isReadOnly();
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, "opening a connection", connection);
        }
        return new PostgresTransaction(handle, statements, driver, hintReadOnly ? readOnly : readWrite);
    }

    private PostgresTransaction(Handle handle, PostgresStatements statements, BaseConnection driver, Begin begin) {
        this.handle = handle;
        this.connection = handle.getConnection();
        this.statements = statements;
        this.driver = driver;
        this.unsent = new StringBuilder(begin.statements());
        this.beginThenClaim = begin.thenClaim();
        this.onlyBeginUnsent = true;
        this.beginUnsent = true;
        this.effectFailures = FailedStatements.watch(handle);
    }

    private static BaseConnection driver(Connection connection, String doing) {
        try {
            return connection.isWrapperFor(BaseConnection.class) ? connection.unwrap(BaseConnection.class) : null;
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, doing, connection);
        }
    }

    /**
     * Ends the effect's guard, and refuses to go on when the effect ended the transaction it was
     * given: it committed or rolled back (through Jdbi, or on the connection itself).
     */
    private void checkEffectKeptTransaction() {
        boolean attempted = effectGuard != null && effectGuard.exit();
        effectGuard = null;
        boolean open = stillOpen();
        if (attempted || !open) {
            broken = !open;
            throw new EffectBrokeTransactionException("the effect committed or rolled back the inbox's transaction (or tried to); an effect must"
                            + " not end the transaction it runs in. What was left of it was rolled back; a commit the"
                            + " effect made holds the claim, so a redelivery answers Duplicate", effectFailures.last());
        }
    }

    private boolean stillOpen() {
        try {
            if (connection.getAutoCommit()) {
                return false;
            }
            // After a commit or rollback with autocommit off, pgjdbc is idle until the next statement.
            return driver == null || driver.getTransactionState() != TransactionState.IDLE;
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, "reading the transaction's state");
        }
    }

    /**
     * Refuses to go on when a statement failed since the transaction (or the innermost
     * savepoint) began: PostgreSQL has then aborted it, and answers a {@code COMMIT} with a
     * rollback that pgjdbc reports as success. Only an effect can get here, by catching a
     * failed statement and returning normally; the inbox's own failures propagate.
     */
    private void checkNotAborted() {
        if (isAborted()) {
            throw new EffectBrokeTransactionException("a statement of the effect failed and the effect went on;"
                    + " PostgreSQL aborted the transaction, so nothing of it can commit. It was rolled back"
                    + " and nothing was recorded. Run a statement that may fail inside a savepoint of the effect's"
                    + " own", effectFailures.last());
        }
    }

    private boolean isAborted() {
        if (driver != null) {
            return driver.getTransactionState() == TransactionState.FAILED;
        }
        // Not pgjdbc's own connection: ask the server, which refuses any statement in an aborted transaction.
        try (Statement probe = connection.createStatement()) {
            probe.execute(first("SELECT 1"));
        } catch (SQLException e) {
            answered(e);
            if (PostgresErrors.IN_FAILED_SQL_TRANSACTION.equals(e.getSQLState())) {
                return true;
            }
            throw PostgresErrors.translate(e, "reading the transaction's state");
        }
        answered(null);
        return false;
    }

    @Override
    public Handle handle() {
        flush();
        // The core asks for the handle right before it runs the effect, and for nothing else.
        if (effectGuard == null) {
            effectGuard = EffectGuard.enter(handle);
        }
        return handle;
    }

    /** Sends the statements that wait in front of the next one, for a statement sent through Jdbi. */
    private void flush() {
        sendPendingResult();
        if (!unsent.isEmpty()) {
            run(takeUnsent(), "beginning the transaction");
        }
    }

    /** {@code sql} with the statements that wait to be sent in front of it. */
    private String first(String sql) {
        return unsent.isEmpty() ? sql : takeUnsent() + "; " + sql;
    }

    private String takeUnsent() {
        String statements = unsent.toString();
        unsent.setLength(0);
        onlyBeginUnsent = false;
        beginLeaves();
        return statements;
    }

    private void beginLeaves() {
        if (beginUnsent) {
            beginUnsent = false;
            beginUnanswered = true;
        }
    }

    /**
     * After the server answered a text, or failed it: if the text carried the transaction's
     * {@code BEGIN}, Jdbi begins the handle's transaction, which turns autocommit off without a
     * statement, since pgjdbc already holds the transaction open (aborted, if the text failed).
     * The commit, the rollback and the savepoints of this class then find the handle as Jdbi
     * would have it. Should Jdbi fail to, the transaction is rolled back at once.
     *
     * @param failure what the text failed with, or {@code null}; a failure of this step is added to it
     */
    private void answered(Exception failure) {
        if (!beginUnanswered) {
            return;
        }
        beginUnanswered = false;
        try {
            handle.begin();
        } catch (RuntimeException e) {
            RuntimeException beginFailure = e instanceof JdbiException jdbiFailure
                    ? PostgresErrors.translate(jdbiFailure, "beginning the transaction", connection) : e;
            if (failure != null) {
                failure.addSuppressed(beginFailure);
            }
            rollBackBegun(failure != null ? failure : beginFailure);
            if (failure == null) {
                throw beginFailure;
            }
        }
    }

    /**
     * Ends, on a connection still in autocommit mode, the transaction the {@code BEGIN} opened on
     * the server: neither Jdbi nor a pool would roll it back, as neither knows of it.
     */
    private void rollBackBegun(Exception failure) {
        try {
            if (driver != null && driver.getTransactionState() == TransactionState.IDLE) {
                return; // nothing open: the BEGIN itself failed, or the connection is gone
            }
            try (Statement rollback = connection.createStatement()) {
                rollback.execute("ROLLBACK");
            }
        } catch (SQLException | RuntimeException e) {
            // The connection is in doubt: the failure that brought us here says why.
            failure.addSuppressed(e);
        }
    }

    @Override
    public Optional<InboxRecord> claim(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
        try {
            // Two rounds at most: a row that blocked the claim and then vanished before the read
            // can only be a purge racing with this call; claiming again settles it.
            for (int round = 0; round < 2; round++) {
                if (insert(inbox, id, fingerprint, content, receivedAt)) {
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

    /** Whether the claim inserted the row; false when a row of this id was there. */
    private boolean insert(String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt)
            throws SQLException {
        sendPendingResult();
        String sql = onlyBeginUnsent ? takeBeginThenClaim() : first(statements.claim);
        boolean inserted;
        try {
            inserted = PostgresStatements.sendClaim(connection, sql, inbox, id, fingerprint, content, receivedAt);
        } catch (SQLException | RuntimeException e) {
            answered(e);
            throw e;
        }
        answered(null);
        return inserted;
    }

    private String takeBeginThenClaim() {
        unsent.setLength(0);
        onlyBeginUnsent = false;
        beginLeaves();
        return beginThenClaim;
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        try {
            flush();
            return InboxRows.horizon(connection, statements.tables(), inbox, PostgresStore.TIME);
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, "reading the horizon");
        }
    }

    /**
     * Stores the result once the effect returned, as {@link #releaseSavepoint()} would check it:
     * an effect that ended the transaction or left it aborted is refused before the statement, so
     * the result never lands in a transaction of its own. The statement waits for the {@code
     * COMMIT} or the release that follows it (see the class's description); on a connection that
     * is not pgjdbc's own, whose transaction state this class cannot read after a failed round
     * trip, it is sent at once.
     */
    @Override
    public void storeResult(String inbox, String id, EncodedResult result) {
        if (effectGuard != null) {
            checkEffectKeptTransaction();
        }
        checkNotAborted();
        flush();
        pendingResult = new PendingResult(inbox, id, result);
        if (driver == null) {
            sendPendingResult();
        }
    }

    /**
     * Sends a waiting result on its own, with its row count checked here; only where something
     * other than the {@code COMMIT} or the release follows it, which the engine never does.
     */
    private void sendPendingResult() {
        PendingResult pending = pendingResult;
        if (pending != null) {
            pendingResult = null;
            pending.send(connection, statements);
        }
    }

    @Override
    public void savepoint() {
        sendPendingResult();
        effectFailures.forget();
        savepoints++;
        onlyBeginUnsent = false;
        unsent.append(unsent.isEmpty() ? "" : "; ").append("SAVEPOINT ").append(savepointName());
    }

    private String savepointName() {
        return "inbox_" + savepoints;
    }

    @Override
    public void releaseSavepoint() {
        checkEffectKeptTransaction();
        checkNotAborted();
        PendingResult pending = pendingResult;
        if (pending == null) {
            execute("RELEASE SAVEPOINT " + savepointName(), "releasing a savepoint");
        } else {
            // The release runs only if the result was stored; if not, the savepoint is still there for the
            // engine's rollback to it.
            pendingResult = null;
            try {
                PostgresStatements.storeResultThen(connection, statements.storeResultChecked + "; RELEASE SAVEPOINT "
                        + savepointName(), pending.inbox(), pending.id(), pending.result());
            } catch (SQLException e) {
                throw PostgresStatements.resultFailure(e, pending.id(), connection);
            }
        }
        savepoints--;
    }

    @Override
    public void rollbackToSavepoint() {
        // Never sent: the rollback would have undone it.
        pendingResult = null;
        if (effectGuard != null) {
            effectGuard.exit();
            effectGuard = null;
        }
        if (broken) {
            // The effect ended the transaction the savepoint was in; there is nothing to roll back to.
            return;
        }
        // This also lifts the abort that any failed statement since the savepoint left on the
        // whole transaction, so the next message of a batch can go on.
        execute("ROLLBACK TO SAVEPOINT " + savepointName() + "; RELEASE SAVEPOINT " + savepointName(),
                "rolling back to a savepoint");
        savepoints--;
    }

    private void execute(String sql, String doing) {
        run(first(sql), doing);
    }

    private void run(String sql, String doing) {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            RuntimeException failure = PostgresErrors.translate(e, doing, connection);
            answered(failure);
            throw failure;
        }
        answered(null);
    }

    @Override
    public void raiseHorizon(String inbox, Instant cutoff) {
        flush();
        statements.raiseHorizon(handle, inbox, cutoff);
    }

    @Override
    public PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
        flush();
        return statements.deleteOldest(handle, inbox, cutoff, after, limit);
    }

    @Override
    public void commit() {
        if (effectGuard != null) {
            // A lone message: the effect ran without a savepoint of its own.
            checkEffectKeptTransaction();
        }
        checkNotAborted();
        if (pendingResult != null) {
            commitWithResult();
            return;
        }
        try {
            handle.commit();
        } catch (JdbiException e) {
            throw commitFailed(e);
        }
        end(null);
    }

    /**
     * What a failed {@code COMMIT} means: a definite failure if the server answered it with an error
     * that rolled back, else an unknown outcome, for which the connection is given up.
     */
    private RuntimeException commitFailed(Exception failure) {
        if (PostgresErrors.rolledBackAtCommit(failure)) {
            // The server answered COMMIT with an error and rolled back: a definite failure.
            return PostgresErrors.translate(failure, "committing");
        }
        // The COMMIT may have reached the server and committed before the answer was lost.
        OutcomeUnknownException unknown = new OutcomeUnknownException("PostgreSQL did not confirm the COMMIT"
                + " (SQLState " + PostgresErrors.sqlState(failure) + "); the message may or may not be applied,"
                + " and delivering it again tells which: " + PostgresErrors.describe(failure), failure);
        end(unknown);
        return unknown;
    }

    /**
     * Sends the waiting result and the {@code COMMIT} behind it in one round trip. The server answers
     * the text before the driver returns, and the state it reports with its answer tells which part
     * failed: still in the transaction (aborted, or open again where pgjdbc's autosave rolled back to
     * its own savepoint), the result's statement failed and the {@code COMMIT} never ran; out of it,
     * the {@code COMMIT} was answered. A lost connection tells nothing.
     */
    private void commitWithResult() {
        PendingResult pending = pendingResult;
        pendingResult = null;
        try {
            PostgresStatements.storeResultThen(connection, statements.storeResultThenCommit, pending.inbox(),
                    pending.id(), pending.result());
        } catch (SQLException e) {
            if (!PostgresErrors.connectionLost(e, connection) && driver.getTransactionState() != TransactionState.IDLE) {
                // Definite, and the transaction is still open: the engine rolls it back.
                throw PostgresStatements.resultFailure(e, pending.id(), connection);
            }
            throw commitFailed(e);
        }
        // Committed. Jdbi ends the transaction it began, which sends nothing more: the driver knows
        // there is none open.
        try {
            handle.commit();
        } catch (JdbiException e) {
            // The server confirmed the commit, so the outcome stands; only the connection is in doubt.
            PostgresStore.log.debug("ending Jdbi's transaction after a commit the server confirmed failed;"
                    + " the connection is discarded", e);
            ended = true;
            PostgresStore.discard(handle, e);
            return;
        }
        end(null);
    }

    @Override
    public void rollback() {
        pendingResult = null;
        if (effectGuard != null) {
            effectGuard.exit();
            effectGuard = null;
        }
        if (ended) {
            return;
        }
        RuntimeException failure = null;
        try {
            handle.rollback();
        } catch (JdbiException e) {
            failure = PostgresErrors.translate(e, "rolling back", connection);
        }
        end(failure);
        if (failure != null) {
            throw failure;
        }
    }

    /** Gives the connection back; a failure while doing so is attached to {@code failure}. */
    private void end(RuntimeException failure) {
        if (ended) {
            return;
        }
        ended = true;
        if (failure instanceof OutcomeUnknownException) {
            // The connection is lost: a rollback cannot reach the server, and errors from
            // closing it would only bury the one that matters.
            closeQuietly(handle);
        } else if (failure != null) {
            PostgresStore.discard(handle, failure);
        } else {
            closeQuietly(handle);
        }
    }

    private void closeQuietly(Handle handle) {
        try {
            handle.close();
        } catch (JdbiException e) {
            // Committed, rolled back or lost already: a failing close cannot change what happened.
            PostgresStore.log.debug("closing an inbox connection failed", e);
        }
    }
}
