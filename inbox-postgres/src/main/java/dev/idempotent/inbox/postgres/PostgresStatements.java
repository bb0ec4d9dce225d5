package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;

/**
 * The inbox's statements on PostgreSQL that need nothing of a transaction's state: the claim, which
 * the inbox's own transactions and joined calls send each with statements of their own in front,
 * storing a result, alone or with the {@code COMMIT} or savepoint release behind it, and the purge's
 * two. One set per store, written once for its {@link InboxTables}:
 * every table is named qualified with the inbox's schema when it has one, so no statement depends
 * on the connection's {@code search_path}. The names come only from {@code InboxTables}, which
 * accepts plain identifiers alone; values are always bound.
 */
final class PostgresStatements {

    /** The claim, as {@link #sendClaim} sends it. */
    final String claim;

    /** Stores a result on the claimed row: parameters as {@link InboxRows#bindResult}, then inbox and id. */
    final String storeResult;

    /**
     * Stores a result on the claimed row and refuses, with {@link #NO_ROW_FOR_THE_RESULT}, unless
     * exactly one row took it: as {@link #storeResult}, for a text that goes on after it in the same
     * round trip ({@link #storeResultThen}), whose statements the server then never runs.
     */
    final String storeResultChecked;

    /** {@link #storeResultChecked}, then the inbox's own transaction's {@code COMMIT}. */
    final String storeResultThenCommit;

    /** The horizon's read of a joined call, see {@code PostgresJoinedTransaction}. */
    final String horizonProbe;

    /**
     * The SQLState {@link #storeResultChecked} fails with when no row took the result:
     * {@code division_by_zero}, which nothing else in the statement can raise.
     */
    static final String NO_ROW_FOR_THE_RESULT = "22012";

    private final InboxTables tables;
    private final String raiseHorizon;
    private final String deleteOldest;

    PostgresStatements(InboxTables tables) {
        this.tables = tables;
        String message = tables.messageTable();
        String horizon = tables.horizonTable();
        // The row count tells in the same statement whether this call inserted the row: 1, or 0 when a
        // row of the id was there. Under READ COMMITTED a claim that meets another transaction's
        // uncommitted row of the same id waits for it to end, then inserts (it rolled back) or does
        // nothing (it committed).
        this.claim = "INSERT INTO " + message + " (" + InboxRows.COLUMNS + ") VALUES (" + InboxRows.PLACEHOLDERS
                + ") ON CONFLICT (inbox, id) DO NOTHING";
        this.storeResult = "UPDATE " + message + " SET result_type = ?, result_type_version = ?, result = ?"
                + " WHERE inbox = ? AND id = ?";
        // The row count of an UPDATE is told only once the round trip is over, too late when a COMMIT
        // or a RELEASE travels behind it. Plain SQL has no RAISE, so the statement divides by whether
        // exactly one row took the result: any other count fails it on the server, which then skips
        // the rest of the text and leaves the transaction open and aborted.
        this.storeResultChecked = "WITH stored AS (" + storeResult + " RETURNING 1)"
                + " SELECT 1 / (count(*) = 1)::int FROM stored";
        this.storeResultThenCommit = storeResultChecked + "; COMMIT";
        // Purgers serialise on the horizon row, which only moves forward. Raising it in the same
        // transaction as the delete means an apply whose claim waited for a purge to delete an old row
        // of the same id reads the raised horizon afterwards (the engine reads it after the claim, and
        // under READ COMMITTED that read sees the purge's commit), so it is refused as stale.
        this.raiseHorizon = "INSERT INTO " + horizon + " AS h (inbox, horizon) VALUES (:inbox, :cutoff)"
                + " ON CONFLICT (inbox) DO UPDATE SET horizon = GREATEST(h.horizon, EXCLUDED.horizon)";
        // id = ANY(ARRAY(...)) rather than id IN (...): once the driver prepares the statement on the
        // server, PostgreSQL may plan IN as a hash semi-join over a scan of the whole table, which made
        // every batch read every row; the array keeps both sides on their indexes under any plan.
        this.deleteOldest = "DELETE FROM " + message + " WHERE inbox = :inbox AND id = ANY(ARRAY("
                + " SELECT id FROM " + message
                + " WHERE inbox = :inbox AND received_at < :cutoff AND (received_at, id) > (:afterReceivedAt, :afterId)"
                + " ORDER BY received_at, id LIMIT :limit)) RETURNING received_at, id";
        // Under REPEATABLE READ or SERIALIZABLE the caller's snapshot may be older than a purge that
        // raised the horizon, and a plain read would answer the old horizon. An insert of the horizon
        // row that does nothing on conflict meets the latest row: if a transaction the snapshot does not
        // see wrote it, PostgreSQL refuses with a serialization failure (retryable); otherwise the
        // snapshot's row is the latest. The insert is undone in a savepoint of its own, so no row is
        // ever left. Under READ COMMITTED it changes nothing, and the read sees the latest commit.
        this.horizonProbe = "SAVEPOINT inbox_horizon;"
                + " INSERT INTO " + horizon + " (inbox, horizon) VALUES (?, ?) ON CONFLICT (inbox) DO NOTHING;"
                + " ROLLBACK TO SAVEPOINT inbox_horizon; RELEASE SAVEPOINT inbox_horizon;"
                + " SELECT horizon AS t FROM " + horizon + " WHERE inbox = ?";
    }

    /** {@return the tables these statements name} */
    InboxTables tables() {
        return tables;
    }

    /** Sends {@code sql}, which ends with a claim; whether the claim inserted the row. */
    static boolean sendClaim(Connection connection, String sql, String inbox, String id, Fingerprint fingerprint,
            Content content, Instant receivedAt) throws SQLException {
        try (PreparedStatement claim = connection.prepareStatement(sql)) {
            InboxRows.bindClaim(claim, inbox, id, fingerprint, content, receivedAt, PostgresStore.TIME);
            // Every statement sent answers, in order: the BEGIN, the lock timeout and a savepoint
            // with a count of 0, a joined claim's set_config calls with a row each, the claim with
            // its row count, which is the last count of all. (A RETURNING column would cost a described result
            // set on every claim to tell the same.)
            int inserted = -1;
            boolean rows = claim.execute();
            while (true) {
                if (!rows) {
                    int count = claim.getUpdateCount();
                    if (count == -1) {
                        break;
                    }
                    inserted = count;
                }
                rows = claim.getMoreResults();
            }
            if (inserted != 0 && inserted != 1) {
                throw new SQLException("the claim answered with a row count of " + inserted + ", not 0 or 1");
            }
            return inserted == 1;
        }
    }

    /**
     * Stores {@code result} on the row of {@code id}, which the transaction on {@code connection}
     * has just claimed; a row count other than 1 means the row is not there to hold it.
     */
    void storeResult(Connection connection, String inbox, String id, EncodedResult result) throws SQLException {
        try (PreparedStatement update = connection.prepareStatement(storeResult)) {
            InboxRows.bindResult(update, result);
            update.setString(4, inbox);
            update.setString(5, id);
            int updated = update.executeUpdate();
            if (updated != 1) {
                throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the result of id '" + id
                        + "' found " + updated + " rows of the id to store it on, not the one this transaction"
                        + " claimed; did the effect delete inbox rows?", null);
            }
        }
    }

    /**
     * Stores {@code result} on the row of {@code id} as {@link #storeResultChecked}, with the
     * statements of {@code sql} (which begins with it) behind it in the same round trip; they run
     * only if exactly one row took the result.
     *
     * @throws SQLException if anything in the text failed; {@link #resultFailure} says what
     */
    static void storeResultThen(Connection connection, String sql, String inbox, String id, EncodedResult result)
            throws SQLException {
        try (PreparedStatement update = connection.prepareStatement(sql)) {
            InboxRows.bindResult(update, result);
            update.setString(4, inbox);
            update.setString(5, id);
            // The driver reads every answer of the text before it returns, and throws the first error.
            update.execute();
        }
    }

    /**
     * The inbox exception for a text of {@link #storeResultThen} that failed before the statements
     * behind the result ran: a row that was not there to take it, or the driver's failure.
     */
    static RuntimeException resultFailure(SQLException failure, String id, Connection connection) {
        if (NO_ROW_FOR_THE_RESULT.equals(failure.getSQLState())) {
            return new InboxStorageException(InboxStorageException.Kind.OTHER, "the result of id '" + id
                    + "' found no row of the id to store it on, not the one this transaction claimed; did the"
                    + " effect delete inbox rows? Nothing of the message was committed", failure);
        }
        return PostgresErrors.translate(failure, "storing the result", connection);
    }

    void raiseHorizon(Handle handle, String inbox, Instant cutoff) {
        try {
            handle.createUpdate(raiseHorizon).bind("inbox", inbox).bind("cutoff", PostgresStore.utc(cutoff)).execute();
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, "raising the horizon");
        }
    }

    PurgeBatch deleteOldest(Handle handle, String inbox, Instant cutoff, PurgePosition after, int limit) {
        try {
            return PurgeBatch.of(handle.createQuery(deleteOldest)
                    .bind("inbox", inbox)
                    .bind("cutoff", PostgresStore.utc(cutoff))
                    .bind("afterReceivedAt", after == null ? OffsetDateTime.MIN : PostgresStore.utc(after.receivedAt()))
                    .bind("afterId", after == null ? "" : after.id())
                    .bind("limit", limit)
                    .map((rs, ctx) -> new PurgePosition(
                            rs.getObject(1, OffsetDateTime.class).toInstant(), rs.getString(2)))
                    .list());
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, "purging");
        }
    }
}
