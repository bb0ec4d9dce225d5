package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.jdbi.spi.JoinedTransaction;
import dev.idempotent.inbox.jdbi.spi.FailedStatements;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * One joined call in a transaction the caller owns: a savepoint, the claim, the effect with the
 * caller's handle, and the savepoint's release or rollback. It never commits, rolls back or purges.
 *
 * <p>The claim alone waits at most the busy timeout: the session's {@code innodb_lock_wait_timeout}
 * is set for it and put back right after it. The caller's isolation level applies; under
 * REPEATABLE READ (MariaDB's default) the read of a row the claim found is a locking read, which
 * sees the latest committed row whatever the transaction's snapshot.
 */
final class MariaDbJoinedTransaction extends JoinedTransaction {

    private static final String SAVEPOINT = "inbox_joined";

    private final Handle handle;
    private final Connection connection;
    private final long lockWaitSeconds;
    private final FailedStatements effectFailures;
    private EffectGuard effectGuard;
    private boolean broken;

    private MariaDbJoinedTransaction(Handle handle, long lockWaitSeconds) {
        this.handle = handle;
        this.connection = handle.getConnection();
        this.lockWaitSeconds = lockWaitSeconds;
        this.effectFailures = FailedStatements.watch(handle);
    }

    /** The caller's transaction on {@code callerHandle}, which must have autocommit off. */
    static MariaDbJoinedTransaction join(Handle callerHandle, long lockWaitSeconds) {
        try {
            JoinedTransaction.requireOpenTransaction(callerHandle.getConnection());
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "reading the caller's connection");
        }
        return new MariaDbJoinedTransaction(callerHandle, lockWaitSeconds);
    }

    @Override
    public void savepoint() {
        effectFailures.forget();
        run("SAVEPOINT " + SAVEPOINT, "opening the joined call's savepoint");
    }

    @Override
    public Optional<InboxRecord> claim(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET @inbox_caller_lock_wait_timeout = @@SESSION.innodb_lock_wait_timeout,"
                    + " SESSION innodb_lock_wait_timeout = " + lockWaitSeconds);
            try {
                return insertOrRead(inbox, id, fingerprint, content, receivedAt);
            } finally {
                statement.execute("SET SESSION innodb_lock_wait_timeout = @inbox_caller_lock_wait_timeout,"
                        + " @inbox_caller_lock_wait_timeout = NULL");
            }
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "claiming the id");
        }
    }

    private Optional<InboxRecord> insertOrRead(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) throws SQLException {
        int affected;
        try (PreparedStatement claim = connection.prepareStatement(MariaDbStore.CLAIM)) {
            InboxRows.bindClaim(claim, inbox, id, fingerprint, content, receivedAt, MariaDbStore.TIME);
            affected = claim.executeUpdate();
        }
        if (affected == 1) {
            return Optional.empty();
        }
        return Optional.of(MariaDbStore.readClaimed(connection, inbox, id));
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        try {
            return InboxRows.horizon(connection, inbox, MariaDbStore.TIME);
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "reading the horizon");
        }
    }

    @Override
    public Handle handle() {
        if (effectGuard == null) {
            effectGuard = EffectGuard.enter(handle);
        }
        return handle;
    }

    private boolean effectDone() {
        if (effectGuard == null) {
            return false;
        }
        boolean attempted = effectGuard.exit();
        effectGuard = null;
        return attempted;
    }

    @Override
    public void releaseSavepoint() {
        try {
            boolean attempted = effectDone();
            boolean open;
            try {
                open = !connection.getAutoCommit();
            } catch (SQLException e) {
                throw MariaDbErrors.translate(e, "reading the caller's connection");
            }
            if (attempted || !open) {
                broken = !open;
                throw broken(null);
            }
            try (Statement statement = connection.createStatement()) {
                statement.execute("RELEASE SAVEPOINT " + SAVEPOINT);
            } catch (SQLException e) {
                if (MariaDbErrors.errorCode(e) == MariaDbErrors.SAVEPOINT_DOES_NOT_EXIST) {
                    // The savepoint went with the transaction: the effect ended it, or MariaDB rolled it
                    // back for a deadlock whose error the effect caught.
                    broken = true;
                    EffectBrokeTransactionException failure = broken(effectFailures.last());
                    failure.addSuppressed(e);
                    throw failure;
                }
                throw MariaDbErrors.translate(e, "releasing the joined call's savepoint");
            }
        } finally {
            effectFailures.stop();
        }
    }

    private static EffectBrokeTransactionException broken(SQLException seen) {
        return new EffectBrokeTransactionException("the caller's transaction ended while the effect ran: the effect"
                + " committed or rolled it back (or tried to), or MariaDB rolled it back for a deadlock whose error"
                + " the effect caught. Whatever was committed stays committed, claim included; whatever was rolled"
                + " back is gone with the claim. An effect must not end the transaction it runs in", seen);
    }

    @Override
    public void rollbackToSavepoint() {
        effectDone();
        try {
            if (broken) {
                return;
            }
            try (Statement statement = connection.createStatement()) {
                statement.execute("ROLLBACK TO SAVEPOINT " + SAVEPOINT);
                statement.execute("RELEASE SAVEPOINT " + SAVEPOINT);
            } catch (SQLException e) {
                if (MariaDbErrors.errorCode(e) == MariaDbErrors.SAVEPOINT_DOES_NOT_EXIST) {
                    throw new InboxBusyException("MariaDB rolled the caller's whole transaction back (a deadlock,"
                            + " most likely) during the joined call; nothing of it remains, and the transaction should"
                            + " be retried from its start", e);
                }
                throw MariaDbErrors.translate(e, "rolling back the joined call's savepoint");
            }
        } finally {
            effectFailures.stop();
        }
    }

    private void run(String sql, String doing) {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, doing);
        }
    }

}
