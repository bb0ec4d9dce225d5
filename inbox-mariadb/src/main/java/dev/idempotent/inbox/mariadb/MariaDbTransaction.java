package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxBusyException;
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
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;

/**
 * One READ COMMITTED InnoDB transaction on a connection of its own, given back when it ends.
 *
 * <p>Before its first statement the transaction sets its isolation level (for this transaction
 * only) and the session's {@code innodb_lock_wait_timeout} to the busy timeout, saving the
 * session's own value in a user variable; it puts that value back when it ends, so a pooled
 * connection goes back as it came. The session variable, rather than {@code SET STATEMENT ...
 * FOR} on each of the inbox's statements, bounds every lock wait of the transaction, the
 * effect's too, as PostgreSQL's {@code lock_timeout} does, and it works on MySQL, which has no
 * {@code SET STATEMENT} and whose {@code SET_VAR} hint takes no InnoDB variable. It costs one
 * statement after the commit.
 *
 * <p>A failed statement fails alone on MariaDB, except a deadlock, after which InnoDB has rolled
 * the whole transaction back; an effect that catches that error and goes on would write its
 * remaining statements into a new transaction, without the claim. Savepoints vanish with a
 * rollback, so the transaction keeps one open around every effect (the message's own in a batch,
 * {@code inbox_guard} for a lone message) and refuses to go on when it is gone.
 *
 * <p>The inbox's own statements run as plain JDBC on the handle's connection.
 */
final class MariaDbTransaction implements StoreTransaction<Handle> {

    private static final String GUARD = "inbox_guard";

    private final Handle handle;
    private final Connection connection;
    private final MariaDbStore store;
    private final FailedStatements effectFailures;
    private EffectGuard effectGuard;
    private int savepoints;
    private boolean guarded;
    private boolean ended;
    // For the log only: the inbox the transaction works for, once a statement has named it.
    private String inbox;

    private MariaDbTransaction(Handle handle, MariaDbStore store) {
        this.handle = handle;
        this.store = store;
        this.connection = handle.getConnection();
        this.effectFailures = FailedStatements.watch(handle);
    }

    /**
     * Begins the transaction on {@code handle}, a fresh handle in autocommit mode, or closes it and
     * throws. The statements are {@code store}'s, which name its tables.
     */
    static MariaDbTransaction begin(Handle handle, String lockWaitTimeout, MariaDbStore store) {
        MariaDbTransaction tx = new MariaDbTransaction(handle, store);
        try {
            handle.begin();
            // After autocommit is off and before any table is read, so this transaction is the
            // "next" one the setting applies to; the session's own level is left as it is.
            tx.run("SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "beginning the transaction");
            tx.run("SET @inbox_lock_wait_timeout = @@SESSION.innodb_lock_wait_timeout,"
                    + " SESSION innodb_lock_wait_timeout = " + lockWaitTimeout, "setting the lock wait timeout");
        } catch (RuntimeException e) {
            RuntimeException failure = e instanceof JdbiException jdbiFailure
                    ? MariaDbErrors.translate(jdbiFailure, "beginning the transaction") : e;
            tx.end(failure);
            throw failure;
        }
        return tx;
    }

    @Override
    public Handle handle() {
        if (savepoints == 0 && !guarded) {
            run("SAVEPOINT " + GUARD, "opening the guard savepoint");
            guarded = true;
        }
        // The core asks for the handle right before it runs the effect, and for nothing else.
        if (effectGuard == null) {
            effectGuard = EffectGuard.enter(handle);
        }
        return handle;
    }

    /**
     * Ends the effect's guard, and refuses to go on, if {@code check} is set, when the effect
     * tried to commit or roll back the transaction through Jdbi.
     */
    private void effectDone(boolean check) {
        if (effectGuard == null) {
            return;
        }
        boolean attempted = effectGuard.exit();
        effectGuard = null;
        if (attempted && check) {
            throw new EffectBrokeTransactionException("the effect tried to commit or roll back the inbox's"
                    + " transaction; an effect must not end the transaction it runs in. It was rolled back and"
                    + " nothing was recorded", null);
        }
    }

    @Override
    public Optional<InboxRecord> claim(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
        this.inbox = inbox;
        try {
            int affected;
            try (PreparedStatement claim = connection.prepareStatement(store.claim)) {
                InboxRows.bindClaim(claim, inbox, id, fingerprint, content, receivedAt, MariaDbStore.TIME);
                affected = claim.executeUpdate();
            }
            if (affected == 1) {
                return Optional.empty();
            }
            if (affected != 0) {
                throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the claim of id '" + id
                        + "' reported " + affected + " rows affected, where 1 means inserted and 0 already stored",
                        null);
            }
            return Optional.of(store.readClaimed(connection, inbox, id));
        } catch (SQLException | JdbiException e) {
            throw MariaDbErrors.translate(e, "claiming the id");
        }
    }

    @Override
    public void storeResult(String inbox, String id, EncodedResult result) {
        try {
            store.storeResult(connection, inbox, id, result, "transaction");
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "storing the result");
        }
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        try {
            return InboxRows.horizon(connection, store.tables(), inbox, MariaDbStore.TIME);
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "reading the horizon");
        }
    }

    @Override
    public void savepoint() {
        effectFailures.forget();
        savepoints++;
        run("SAVEPOINT inbox_" + savepoints, "opening a savepoint");
    }

    @Override
    public void releaseSavepoint() {
        effectDone(true);
        release("inbox_" + savepoints);
        savepoints--;
    }

    /** Releases {@code savepoint}, or reports that the transaction it belonged to was rolled back. */
    private void release(String savepoint) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("RELEASE SAVEPOINT " + savepoint);
        } catch (SQLException e) {
            if (MariaDbErrors.errorCode(e) == MariaDbErrors.SAVEPOINT_DOES_NOT_EXIST) {
                EffectBrokeTransactionException broken = new EffectBrokeTransactionException("MariaDB rolled the"
                        + " transaction back while the effect ran (a deadlock, most likely, whose error the effect"
                        + " caught and went on from), so what the effect wrote afterwards is not in the transaction"
                        + " the claim was. It was rolled back and nothing was recorded. Let a deadlock error leave"
                        + " the effect, or retry the whole message", effectFailures.last());
                broken.addSuppressed(e);
                throw broken;
            }
            throw MariaDbErrors.translate(e, "releasing a savepoint");
        }
    }

    @Override
    public void rollbackToSavepoint() {
        effectDone(false);
        // ROLLBACK TO keeps the savepoint; the next one of that name replaces it, and the release
        // of an enclosing one or the commit ends it, so no RELEASE is sent for it.
        try (Statement statement = connection.createStatement()) {
            statement.execute("ROLLBACK TO SAVEPOINT inbox_" + savepoints);
        } catch (SQLException e) {
            if (MariaDbErrors.errorCode(e) == MariaDbErrors.SAVEPOINT_DOES_NOT_EXIST) {
                // Only a rollback of the whole transaction takes savepoints away, and a deadlock is
                // what rolls one back: the batch's earlier messages went with it.
                throw new InboxBusyException("MariaDB rolled the whole transaction back (a deadlock, most likely)"
                        + " while a message of it ran; nothing of the call was applied and it may be retried", e);
            }
            throw MariaDbErrors.translate(e, "rolling back to a savepoint");
        }
        savepoints--;
    }

    private void run(String sql, String doing) {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, doing);
        }
    }

    @Override
    public void raiseHorizon(String inbox, Instant cutoff) {
        this.inbox = inbox;
        try (PreparedStatement raise = connection.prepareStatement(store.raiseHorizon)) {
            raise.setString(1, inbox);
            MariaDbStore.TIME.bind(raise, 2, cutoff);
            raise.executeUpdate();
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "raising the horizon");
        }
    }

    @Override
    public PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
        try {
            List<PurgePosition> oldest = new ArrayList<>();
            try (PreparedStatement select = connection.prepareStatement(store.selectOldest)) {
                long afterMillis = after == null ? Long.MIN_VALUE : after.receivedAt().toEpochMilli();
                select.setString(1, inbox);
                MariaDbStore.TIME.bind(select, 2, cutoff);
                select.setLong(3, afterMillis);
                select.setLong(4, afterMillis);
                select.setString(5, after == null ? "" : after.id());
                select.setInt(6, limit);
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        oldest.add(new PurgePosition(MariaDbStore.TIME.read(rows, "received_at"), rows.getString("id")));
                    }
                }
            }
            if (!oldest.isEmpty()) {
                String placeholders = String.join(", ", Collections.nCopies(oldest.size(), "?"));
                try (PreparedStatement delete = connection.prepareStatement(
                        store.deleteIds + placeholders + ")")) {
                    delete.setString(1, inbox);
                    for (int i = 0; i < oldest.size(); i++) {
                        delete.setString(i + 2, oldest.get(i).id());
                    }
                    delete.executeUpdate();
                }
            }
            return PurgeBatch.of(oldest);
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "purging");
        }
    }

    @Override
    public void commit() {
        effectDone(true);
        if (guarded) {
            release(GUARD);
        }
        try {
            handle.commit();
        } catch (JdbiException e) {
            if (MariaDbErrors.rolledBackAtCommit(e)) {
                // The server answered COMMIT with an error and rolled back: a definite failure.
                throw MariaDbErrors.translate(e, "committing");
            }
            // The COMMIT may have reached the server and committed before the answer was lost.
            OutcomeUnknownException unknown = new OutcomeUnknownException("MariaDB did not confirm the COMMIT"
                    + " (error " + MariaDbErrors.errorCode(e) + ", SQLState " + MariaDbErrors.sqlState(e)
                    + "); the message may or may not be applied, and delivering it again tells which: "
                    + MariaDbErrors.describe(e), e);
            end(unknown);
            throw unknown;
        }
        endCommitted();
    }

    /**
     * Puts the session's lock wait timeout back after a commit and gives the connection back. The
     * transaction committed, so a failure here must not reach the caller: an error would say that
     * nothing was applied. The connection, whose setting is not back (most likely it is lost), is
     * aborted instead, so that no pool hands it out again.
     */
    private void endCommitted() {
        ended = true;
        RuntimeException restoreFailure = restoreSession();
        if (restoreFailure != null) {
            abort();
            MariaDbStore.log.warn("inbox={} committed, but MariaDB then failed restoring the session's"
                    + " innodb_lock_wait_timeout; the connection was aborted rather than given back",
                    inbox, restoreFailure);
        }
        closeQuietly();
    }

    @Override
    public void rollback() {
        effectDone(false);
        if (ended) {
            return;
        }
        RuntimeException failure = null;
        try {
            handle.rollback();
        } catch (JdbiException e) {
            failure = MariaDbErrors.translate(e, "rolling back");
        }
        end(failure);
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Puts the session's lock wait timeout back and gives the connection back; a failure while
     * doing so is attached to {@code failure}, or thrown if there is none.
     */
    private void end(RuntimeException failure) {
        if (ended) {
            return;
        }
        ended = true;
        boolean lost = failure instanceof OutcomeUnknownException
                || failure != null && MariaDbErrors.isConnectionLost(failure);
        RuntimeException restoreFailure = lost ? null : restoreSession();
        if (restoreFailure != null) {
            // A connection whose setting could not be put back must not go back to a pool.
            abort();
        }
        if (failure != null && !lost) {
            MariaDbStore.discard(handle, failure);
        } else {
            closeQuietly();
        }
        if (restoreFailure != null) {
            if (failure != null) {
                failure.addSuppressed(restoreFailure);
            } else {
                throw restoreFailure;
            }
        }
    }

    /** {@return the failure to put the session's lock wait timeout back, or null if it is back} */
    private RuntimeException restoreSession() {
        try (Statement statement = connection.createStatement()) {
            // The session had one before the transaction began, unless setting it failed first.
            statement.execute("SET SESSION innodb_lock_wait_timeout"
                    + " = COALESCE(@inbox_lock_wait_timeout, @@SESSION.innodb_lock_wait_timeout),"
                    + " @inbox_lock_wait_timeout = NULL");
            return null;
        } catch (SQLException e) {
            return MariaDbErrors.translate(e, "restoring the session's innodb_lock_wait_timeout");
        }
    }

    private void abort() {
        try {
            connection.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            MariaDbStore.log.debug("aborting an inbox connection failed", e);
        }
    }

    private void closeQuietly() {
        try {
            handle.close();
        } catch (JdbiException e) {
            // Committed, rolled back or lost already: a failing close cannot change what happened.
            MariaDbStore.log.debug("closing an inbox connection failed", e);
        }
    }
}
