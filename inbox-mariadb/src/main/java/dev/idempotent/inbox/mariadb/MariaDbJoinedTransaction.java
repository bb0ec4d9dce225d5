package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.jdbi.spi.JoinedTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * One joined call in a transaction the caller owns: the savepoint protocol of {@link
 * JoinedTransaction}, with MariaDB's claim and its whole-transaction rollbacks.
 *
 * <p>The claim is a plain {@code INSERT}, in the call's savepoint: a duplicate key fails that
 * statement alone, and the row it met is then read. Its answer so depends on no setting of the
 * caller's connection (an {@code INSERT ... ON DUPLICATE KEY UPDATE} answers 1 for an existing row
 * on a connection that counts found rows, the driver's default). The claim alone waits at most the
 * busy timeout: the session's {@code innodb_lock_wait_timeout} is set for it and put back right
 * after it. The caller's isolation level applies; under REPEATABLE READ (MariaDB's default) the
 * reads of the row the claim met and of the horizon are locking reads, which see the latest
 * committed row whatever the transaction's snapshot.
 *
 * <p>A deadlock makes InnoDB roll the caller's whole transaction back, savepoints and all. The call
 * then says to retry the whole transaction, and the connection keeps a savepoint of the inbox's as a
 * mark, which the caller's commit or rollback ends: until then, its joined calls are refused.
 */
final class MariaDbJoinedTransaction extends JoinedTransaction {

    private static final int DUPLICATE_KEY = 1062;
    private static final String LOST_MARK = "inbox_transaction_lost";

    private final long lockWaitSeconds;
    private final MariaDbStore store;

    private MariaDbJoinedTransaction(Handle handle, long lockWaitSeconds, MariaDbStore store) {
        super(handle);
        this.lockWaitSeconds = lockWaitSeconds;
        this.store = store;
    }

    /** The caller's transaction on {@code callerHandle}, which must have autocommit off. */
    static MariaDbJoinedTransaction join(Handle callerHandle, long lockWaitSeconds, MariaDbStore store) {
        try {
            JoinedTransaction.requireOpenTransaction(callerHandle.getConnection());
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "reading the caller's connection");
        }
        return new MariaDbJoinedTransaction(callerHandle, lockWaitSeconds, store);
    }

    @Override
    protected RuntimeException translate(SQLException failure, String doing) {
        return MariaDbErrors.translate(failure, doing);
    }

    @Override
    protected boolean noSuchSavepoint(SQLException failure) {
        return MariaDbErrors.errorCode(failure) == MariaDbErrors.SAVEPOINT_DOES_NOT_EXIST;
    }

    @Override
    protected void markLost() throws SQLException {
        execute("SAVEPOINT " + LOST_MARK);
    }

    @Override
    protected boolean stillLost() throws SQLException {
        // A commit or rollback ends every savepoint; a release, which changes nothing else, tells.
        try {
            execute("RELEASE SAVEPOINT " + LOST_MARK);
        } catch (SQLException e) {
            if (noSuchSavepoint(e)) {
                return false;
            }
            throw e;
        }
        execute("SAVEPOINT " + LOST_MARK);
        return true;
    }

    @Override
    public Optional<InboxRecord> claim(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
        RuntimeException failure = null;
        try {
            execute("SET @inbox_caller_lock_wait_timeout = @@SESSION.innodb_lock_wait_timeout,"
                    + " SESSION innodb_lock_wait_timeout = " + lockWaitSeconds);
            return insertOrRead(inbox, id, fingerprint, content, receivedAt);
        } catch (SQLException e) {
            failure = deadlock(e, "claiming the id");
            throw failure;
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        } finally {
            try {
                execute("SET SESSION innodb_lock_wait_timeout = COALESCE(@inbox_caller_lock_wait_timeout,"
                        + " @@SESSION.innodb_lock_wait_timeout), @inbox_caller_lock_wait_timeout = NULL");
            } catch (SQLException e) {
                // The claim's own failure is the one to report; a failed restore goes with it.
                RuntimeException restore = MariaDbErrors.translate(e, "restoring the session's innodb_lock_wait_timeout");
                if (failure == null) {
                    throw restore;
                }
                failure.addSuppressed(restore);
            }
        }
    }

    private Optional<InboxRecord> insertOrRead(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) throws SQLException {
        try (PreparedStatement claim = connection.prepareStatement(store.joinedClaim)) {
            InboxRows.bindClaim(claim, inbox, id, fingerprint, content, receivedAt, MariaDbStore.TIME);
            claim.executeUpdate();
            return Optional.empty();
        } catch (SQLException e) {
            if (MariaDbErrors.errorCode(e) != DUPLICATE_KEY) {
                throw e;
            }
        }
        return Optional.of(store.readClaimed(connection, inbox, id));
    }

    /**
     * The failure to throw for {@code e}: for a deadlock, after which InnoDB has rolled the
     * caller's whole transaction back, one that says to retry all of it.
     */
    private RuntimeException deadlock(SQLException e, String doing) {
        if (MariaDbErrors.errorCode(e) != MariaDbErrors.DEADLOCK) {
            return translate(e, doing);
        }
        RuntimeException lost = wholeTransactionRolledBack("MariaDB broke a deadlock by rolling the caller's whole"
                + " transaction back, " + doing, e);
        transactionLost(lost);
        return lost;
    }

    /** In the call's savepoint, on the row the call's claim inserted. */
    @Override
    public void storeResult(String inbox, String id, EncodedResult result) {
        try {
            store.storeResult(connection, inbox, id, result, "call");
        } catch (SQLException e) {
            throw deadlock(e, "storing the result");
        }
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        try (PreparedStatement read = connection.prepareStatement(store.joinedHorizon)) {
            read.setString(1, inbox);
            try (ResultSet row = read.executeQuery()) {
                return row.next() ? Optional.ofNullable(MariaDbStore.TIME.read(row, "t")) : Optional.empty();
            }
        } catch (SQLException e) {
            throw deadlock(e, "reading the horizon");
        }
    }
}
