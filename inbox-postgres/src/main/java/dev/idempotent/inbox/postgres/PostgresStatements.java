package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Fingerprint;
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
 * and the purge's two.
 */
final class PostgresStatements {

    // The row count tells in the same statement whether this call inserted the row: 1, or 0 when a
    // row of the id was there. Under READ COMMITTED a claim that meets another transaction's
    // uncommitted row of the same id waits for it to end, then inserts (it rolled back) or does
    // nothing (it committed).
    static final String CLAIM = "INSERT INTO inbox_message (" + InboxRows.COLUMNS + ") VALUES ("
            + InboxRows.PLACEHOLDERS + ") ON CONFLICT (inbox, id) DO NOTHING";

    // Purgers serialise on the horizon row, which only moves forward. Raising it in the same
    // transaction as the delete means an apply whose claim waited for a purge to delete an old row
    // of the same id reads the raised horizon afterwards (the engine reads it after the claim, and
    // under READ COMMITTED that read sees the purge's commit), so it is refused as stale.
    private static final String RAISE_HORIZON = """
            INSERT INTO inbox_horizon (inbox, horizon) VALUES (:inbox, :cutoff)
            ON CONFLICT (inbox) DO UPDATE SET horizon = GREATEST(inbox_horizon.horizon, EXCLUDED.horizon)""";

    // id = ANY(ARRAY(...)) rather than id IN (...): once the driver prepares the statement on the
    // server, PostgreSQL may plan IN as a hash semi-join over a scan of the whole table, which made
    // every batch read every row; the array keeps both sides on their indexes under any plan.
    private static final String DELETE_OLDEST = """
            DELETE FROM inbox_message WHERE inbox = :inbox AND id = ANY(ARRAY(
                SELECT id FROM inbox_message
                WHERE inbox = :inbox AND received_at < :cutoff AND (received_at, id) > (:afterReceivedAt, :afterId)
                ORDER BY received_at, id LIMIT :limit))
            RETURNING received_at, id""";

    private PostgresStatements() {}

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

    static void raiseHorizon(Handle handle, String inbox, Instant cutoff) {
        try {
            handle.createUpdate(RAISE_HORIZON).bind("inbox", inbox).bind("cutoff", PostgresStore.utc(cutoff)).execute();
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, "raising the horizon");
        }
    }

    static PurgeBatch deleteOldest(Handle handle, String inbox, Instant cutoff, PurgePosition after, int limit) {
        try {
            return PurgeBatch.of(handle.createQuery(DELETE_OLDEST)
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
