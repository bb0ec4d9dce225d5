package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;

/** One BEGIN IMMEDIATE transaction on the writer connection of a {@link SqliteStore}. */
final class SqliteTransaction implements StoreTransaction<Handle> {

    private final SqliteWriter writer;
    private final Handle handle;
    private final String file;
    private final WalCheckpointer checkpointer;
    private final Runnable discardWriter;
    private EffectGuard effectGuard;
    private boolean ended;
    // A failure of the claim that SQLite may answer by rolling back the whole transaction
    // (a full database or disk, an I/O error), so that a savepoint rollback that then finds
    // no savepoint reports it instead of "no such savepoint".
    private SQLException abortedBy;

    /**
     * The transaction {@code writer} has just begun on {@code file}; {@code discardWriter} drops the
     * writer when its connection is in doubt.
     */
    SqliteTransaction(SqliteWriter writer, String file, WalCheckpointer checkpointer, Runnable discardWriter) {
        this.writer = writer;
        this.handle = writer.handle;
        this.file = file;
        this.checkpointer = checkpointer;
        this.discardWriter = discardWriter;
    }

    @Override
    public Handle handle() {
        writer.forEffect();
        if (effectGuard == null) {
            WriteLocks.hold(file, handle);
            effectGuard = EffectGuard.enter(handle);
        }
        return handle;
    }

    /**
     * Ends the effect's guards, and refuses to go on if it tried to end the transaction
     * through Jdbi (which Jdbi itself would have ignored here) and {@code check} is set.
     */
    private void effectDone(boolean check) {
        if (effectGuard == null) {
            return;
        }
        WriteLocks.release(file, handle);
        boolean attempted = effectGuard.exit();
        effectGuard = null;
        if (attempted && check) {
            throw effectEndedTransaction(null);
        }
    }

    private EffectBrokeTransactionException effectEndedTransaction(SQLException seen) {
        return new EffectBrokeTransactionException("the effect committed or rolled back the inbox's transaction"
                + " (or tried to); an effect runs inside the inbox's BEGIN IMMEDIATE transaction and must not"
                + " begin, commit or roll back. What was left of it was rolled back; a commit the effect made"
                + " holds the claim, so a redelivery answers Duplicate", seen);
    }

    @Override
    public Optional<InboxRecord> claim(
            String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
        try {
            InboxRows.bindClaim(writer.claim, inbox, id, fingerprint, content, receivedAt, SqliteStore.TIME);
            if (writer.insert()) {
                return Optional.empty();
            }
            return Optional.of(writer.select(inbox, id).orElseThrow(() -> new InboxStorageException(
                    InboxStorageException.Kind.OTHER,
                    "the claim of id '" + id + "' found a conflicting row that then could not be read", null)));
        } catch (SQLException e) {
            writer.failed();
            int code = SqliteErrors.resultCode(e);
            if (code == SqliteErrors.SQLITE_FULL || code == SqliteErrors.SQLITE_IOERR) {
                abortedBy = e;
            }
            throw SqliteErrors.translate(e, "claiming the id");
        }
    }

    @Override
    public void storeResult(String inbox, String id, EncodedResult result) {
        boolean stored;
        try {
            stored = writer.storeResult(inbox, id, result);
        } catch (SQLException e) {
            writer.failed();
            int code = SqliteErrors.resultCode(e);
            if (code == SqliteErrors.SQLITE_FULL || code == SqliteErrors.SQLITE_IOERR) {
                abortedBy = e;
            }
            throw SqliteErrors.translate(e, "storing the result");
        }
        if (!stored) {
            throw noClaimedRow(id);
        }
    }

    static InboxStorageException noClaimedRow(String id) {
        return new InboxStorageException(InboxStorageException.Kind.OTHER, "the result of id '" + id
                + "' found no row of the id to store it on, though this transaction claimed it", null);
    }

    @Override
    public void savepoint() {
        writer.run(writer.savepoint, "opening a savepoint");
    }

    @Override
    public void releaseSavepoint() {
        effectDone(true);
        writer.forOwnStatements();
        try {
            writer.release.execute();
        } catch (SQLException e) {
            throw SqliteFiles.noSuchSavepoint(e) ? effectEndedTransaction(e) : SqliteErrors.translate(e,
                    "releasing a savepoint");
        }
    }

    @Override
    public void rollbackToSavepoint() {
        effectDone(false);
        // ROLLBACK TO keeps the savepoint open; RELEASE ends it with nothing left in it.
        try {
            writer.run(writer.rollbackTo, "rolling back to a savepoint");
            writer.run(writer.release, "releasing a savepoint");
        } catch (InboxException e) {
            if (abortedBy == null) {
                throw e;
            }
            InboxException cause = SqliteErrors.translate(abortedBy,
                    "claiming the id, and SQLite rolled back the whole transaction with it");
            cause.addSuppressed(e);
            throw cause;
        }
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        try {
            writer.horizon.setString(1, inbox);
            try (ResultSet rs = writer.horizon.executeQuery()) {
                return rs.next() ? Optional.of(Instant.ofEpochMilli(rs.getLong(1))) : Optional.empty();
            }
        } catch (SQLException e) {
            throw SqliteErrors.translate(e, "reading the horizon");
        }
    }

    @Override
    public void raiseHorizon(String inbox, Instant cutoff) {
        try {
            handle.execute(writer.sql.raiseHorizon, inbox, cutoff.toEpochMilli());
        } catch (JdbiException e) {
            throw SqliteErrors.translate(e, "raising the horizon");
        }
    }

    @Override
    public PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
        try {
            return PurgeBatch.of(handle.createQuery(writer.sql.deleteOldest)
                    .bind("inbox", inbox)
                    .bind("cutoff", cutoff.toEpochMilli())
                    .bind("afterReceivedAt", after == null ? Long.MIN_VALUE : after.receivedAt().toEpochMilli())
                    .bind("afterId", after == null ? "" : after.id())
                    .bind("limit", limit)
                    .map((rs, ctx) -> new PurgePosition(Instant.ofEpochMilli(rs.getLong(1)), rs.getString(2)))
                    .list());
        } catch (JdbiException e) {
            throw SqliteErrors.translate(e, "purging");
        }
    }

    @Override
    public void commit() {
        effectDone(true);
        if (handle.isInTransaction()) {
            // The effect switched the handle to a JDBC transaction of its own: Jdbi would have
            // joined it silently, and what it commits would no longer be what this claim guards.
            throw new EffectBrokeTransactionException("the effect began a transaction on the inbox's handle; an"
                    + " effect runs inside the inbox's BEGIN IMMEDIATE transaction and must not begin, commit or"
                    + " roll back. It was rolled back and nothing was recorded", null);
        }
        writer.forOwnStatements();
        try {
            writer.commit.execute();
        } catch (SQLException e) {
            writer.failed();
            if (SqliteFiles.noTransactionActive(e)) {
                throw effectEndedTransaction(e);
            }
            int code = SqliteErrors.resultCode(e);
            if (code == SqliteErrors.SQLITE_BUSY || code == SqliteErrors.SQLITE_FULL
                    || code == SqliteErrors.SQLITE_CONSTRAINT) {
                // SQLite refused before writing (a deferred constraint fails before anything is
                // written): the transaction did not commit.
                throw SqliteErrors.translate(e, "committing");
            }
            throw new OutcomeUnknownException(
                    "SQLite failed during COMMIT; the message may or may not be applied: " + e.getMessage(), e);
        }
        checkpointer.committed();
        end();
    }

    @Override
    public void rollback() {
        effectDone(false);
        if (ended) {
            return;
        }
        writer.forOwnStatements();
        try {
            writer.rollback.execute();
            if (handle.isInTransaction()) {
                // An effect left the connection in JDBC transaction mode; a fresh one is cheaper than repair.
                discardWriter.run();
            }
        } catch (SQLException | JdbiException e) {
            // SQLite may already have rolled back by itself (after a disk or I/O error, for instance);
            // either way the connection is in doubt, and closing it rolls back whatever is left.
            discardWriter.run();
            throw SqliteErrors.translate(e, "rolling back");
        } finally {
            end();
        }
    }

    private void end() {
        ended = true;
    }
}
