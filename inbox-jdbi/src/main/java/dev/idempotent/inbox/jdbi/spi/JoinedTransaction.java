package dev.idempotent.inbox.jdbi.spi;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import org.jdbi.v3.core.Handle;

/**
 * One joined call ({@link dev.idempotent.inbox.spi.InboxStore#join}) in a transaction the caller
 * owns: the savepoint protocol every database shares, written once. Each call opens a savepoint of
 * its own name, so calls nested in each other's effects roll back to their own; it releases it when
 * the effect returned, and rolls back to it and releases it when anything failed. A transaction the
 * effect ended under the call (a commit or rollback through Jdbi or on the raw connection, or a
 * database that rolled it back) is refused by name, on every database: the savepoint is gone with it.
 * The caller owns the transaction, so ending it or purging in it is refused.
 *
 * <p>A store supplies the claim and the reads, and the few places where databases differ: its
 * error translation, how it recognises a savepoint that no longer exists, and, where it can tell
 * more cheaply or sooner than a failed release, whether the transaction is still open or aborted.
 */
@Beta
public abstract class JoinedTransaction implements StoreTransaction<Handle> {

    private static final AtomicLong calls = new AtomicLong();

    /** The caller's handle, which the effect receives. */
    protected final Handle handle;
    /** The caller's connection, which the inbox's own statements run on. */
    protected final Connection connection;
    /** The failures of the effect's statements, to blame for a transaction the effect caught one of. */
    protected final FailedStatements effectFailures;
    private final String savepoint = "inbox_joined_" + calls.incrementAndGet();
    private JoinedCalls.Call call;
    private EffectGuard effectGuard;
    private boolean ended;

    /**
     * For subclasses: the caller's open transaction on {@code handle}.
     *
     * @param handle the caller's handle, with autocommit off (see {@link #requireOpenTransaction})
     */
    protected JoinedTransaction(Handle handle) {
        this.handle = handle;
        this.connection = handle.getConnection();
        this.effectFailures = FailedStatements.watch(handle);
    }

    /**
     * Refuses a connection in autocommit mode, which has no transaction of the caller's to join.
     *
     * @param connection the caller's connection
     * @throws SQLException if its mode cannot be read
     * @throws InboxException if it is in autocommit mode
     */
    public static void requireOpenTransaction(Connection connection) throws SQLException {
        if (connection.getAutoCommit()) {
            throw new InboxException("the connection is in autocommit mode, so there is no transaction of yours to"
                    + " join: turn autocommit off (or use Jdbi's inTransaction) before applying in it, or call"
                    + " apply, which opens a transaction of its own");
        }
    }

    /**
     * The inbox exception for {@code failure}, which happened while {@code doing}.
     *
     * @param failure what the driver threw
     * @param doing what the inbox was doing, as a phrase ("releasing the joined call's savepoint")
     * @return the exception to throw
     */
    protected abstract RuntimeException translate(SQLException failure, String doing);

    /**
     * {@return whether {@code failure} says the savepoint named does not exist}, which in a
     * transaction the inbox left open means the transaction it was in has ended
     *
     * @param failure what a release or rollback to the call's savepoint failed with
     */
    protected abstract boolean noSuchSavepoint(SQLException failure);

    /**
     * Sends the call's {@code SAVEPOINT}; a store may instead send it in front of its claim.
     *
     * @param sql the statement
     * @throws SQLException if it fails
     */
    protected void sendSavepoint(String sql) throws SQLException {
        execute(sql);
    }

    /** Sends whatever the store deferred, before the effect's statements follow. */
    protected void flush() {}

    /**
     * Sends the release of the call's savepoint, once the effect returned and nothing refused it; a
     * store may send what it deferred since the effect (a stored result) in the same round trip.
     *
     * @param sql the statement
     * @throws SQLException if it fails
     */
    protected void sendRelease(String sql) throws SQLException {
        execute(sql);
    }

    /**
     * Whether the caller's transaction has visibly ended: by default, when the connection is in
     * autocommit mode again. A store whose driver tracks more says so sooner.
     *
     * @return true if it ended
     * @throws SQLException if the state cannot be read
     */
    protected boolean transactionEnded() throws SQLException {
        return connection.getAutoCommit();
    }

    /**
     * Refuses to release a savepoint the database cannot commit (PostgreSQL, after the effect
     * caught a failed statement and went on); by default, nothing to refuse.
     */
    protected void checkNotAborted() {}

    /** Called right before the effect runs, on the caller's thread. */
    protected void effectStarting() {}

    /** Called once the effect returned or threw. */
    protected void effectEnded() {}

    /**
     * Marks the connection, whose whole transaction the database rolled back, so that {@link
     * #stillLost()} can tell until when; by default nothing is marked and nothing refused later.
     *
     * @throws SQLException if the mark cannot be set
     */
    protected void markLost() throws SQLException {}

    /**
     * {@return whether the transaction that {@link #markLost()} marked is still the connection's}
     * (the caller has not yet ended it); false by default
     *
     * @throws SQLException if it cannot be told
     */
    protected boolean stillLost() throws SQLException {
        return false;
    }

    /**
     * Runs {@code sql} on the caller's connection.
     *
     * @param sql one statement
     * @throws SQLException if it fails
     */
    protected final void execute(String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /**
     * Records that the database rolled the caller's whole transaction back under this call (a
     * deadlock): the outcomes of the transaction's earlier joined calls go with it, and the
     * connection's later joined calls are refused until the caller ends the transaction.
     *
     * @param cause what said so, to which a failure to mark the connection is attached
     */
    protected final void transactionLost(Exception cause) {
        ended = true;
        JoinedCalls.transactionLost(connection);
        try {
            markLost();
        } catch (SQLException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /**
     * The failure for a call in a transaction the database rolled back whole.
     *
     * @param what what happened, as a sentence start ("MariaDB broke a deadlock by rolling back ...")
     * @param cause the driver's failure, or {@code null}
     * @return the exception to throw
     */
    protected static InboxBusyException wholeTransactionRolledBack(String what, Exception cause) {
        return new InboxBusyException(what + "; nothing of it remains, the joined calls made in it before included,"
                + " and the inbox refuses further joined calls in it. Roll the transaction back and retry the whole"
                + " of it, not this call alone", cause);
    }

    @Override
    public final void savepoint() {
        if (JoinedCalls.isLost(connection)) {
            boolean still;
            try {
                still = stillLost();
            } catch (SQLException e) {
                throw translate(e, "reading whether the caller's transaction ended");
            }
            if (still) {
                throw wholeTransactionRolledBack("an earlier joined call found that the database had rolled the"
                        + " caller's transaction back whole", null);
            }
            JoinedCalls.found(connection);
        }
        effectFailures.forget();
        try {
            sendSavepoint("SAVEPOINT " + savepoint);
        } catch (SQLException e) {
            throw translate(e, "opening the joined call's savepoint");
        }
        call = JoinedCalls.open(connection);
    }

    /** {@return the name of this call's savepoint} */
    protected final String savepointName() {
        return savepoint;
    }

    @Override
    public final Handle handle() {
        flush();
        // The core asks for the handle right before it runs the effect, and for nothing else.
        if (effectGuard == null) {
            effectStarting();
            effectGuard = EffectGuard.enter(handle);
        }
        return handle;
    }

    /** Ends the effect's guard; whether the effect tried to end its transaction through Jdbi. */
    private boolean effectDone() {
        if (effectGuard == null) {
            return false;
        }
        boolean attempted = effectGuard.exit();
        effectGuard = null;
        effectEnded();
        return attempted;
    }

    @Override
    public final void releaseSavepoint() {
        try {
            boolean attempted = effectDone();
            boolean endedUnder;
            try {
                endedUnder = transactionEnded();
            } catch (SQLException e) {
                throw translate(e, "reading the caller's transaction state");
            }
            if (attempted || endedUnder) {
                ended = endedUnder;
                throw broken(null);
            }
            checkNotAborted();
            try {
                sendRelease("RELEASE SAVEPOINT " + savepoint);
            } catch (SQLException e) {
                if (noSuchSavepoint(e)) {
                    // The savepoint went with the transaction: the effect ended it and went on, or the
                    // database rolled it back for an error (a deadlock) the effect caught.
                    EffectBrokeTransactionException failure = broken(effectFailures.last());
                    failure.addSuppressed(e);
                    transactionLost(failure);
                    throw failure;
                }
                throw translate(e, "releasing the joined call's savepoint");
            }
            call.close(true);
        } finally {
            effectFailures.stop();
        }
    }

    private static EffectBrokeTransactionException broken(SQLException seen) {
        return new EffectBrokeTransactionException("the caller's transaction ended while the effect ran: the effect"
                + " committed or rolled it back (or tried to), or the database rolled it back for an error the"
                + " effect caught. Whatever was committed stays committed, claim included; whatever was rolled back"
                + " is gone with the claim; what the effect wrote afterwards is in a transaction of its own, which"
                + " you should roll back. An effect must not end the transaction it runs in", seen);
    }

    @Override
    public final void rollbackToSavepoint() {
        effectDone();
        try {
            if (ended || call == null) {
                // The transaction the savepoint was in has ended; there is nothing to roll back to.
                return;
            }
            try {
                rollBackTo(savepoint);
            } catch (SQLException e) {
                if (noSuchSavepoint(e)) {
                    InboxBusyException lost = wholeTransactionRolledBack("the caller's transaction ended during the"
                            + " joined call (the database rolled it back, a deadlock most likely, or the effect"
                            + " committed or rolled it back)", e);
                    transactionLost(lost);
                    throw lost;
                }
                throw translate(e, "rolling back the joined call's savepoint");
            }
        } finally {
            if (call != null) {
                call.close(false);
            }
            effectFailures.stop();
        }
    }

    /**
     * Rolls back to {@code name} and releases it; a store may send both in one text.
     *
     * @param name the call's savepoint
     * @throws SQLException if either fails
     */
    protected void rollBackTo(String name) throws SQLException {
        execute("ROLLBACK TO SAVEPOINT " + name);
        execute("RELEASE SAVEPOINT " + name);
    }

    @Override
    public final void raiseHorizon(String inbox, Instant cutoff) {
        throw new IllegalStateException("the inbox never purges in a joined transaction");
    }

    @Override
    public final PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
        throw new IllegalStateException("the inbox never purges in a joined transaction");
    }

    @Override
    public final void commit() {
        throw new IllegalStateException("the caller owns a joined transaction; the inbox must not commit it");
    }

    @Override
    public final void rollback() {
        throw new IllegalStateException("the caller owns a joined transaction; the inbox must not roll it back");
    }
}
