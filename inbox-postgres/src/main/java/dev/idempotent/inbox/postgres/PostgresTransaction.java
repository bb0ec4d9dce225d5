package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.OutcomeUnknownException;
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
import java.time.OffsetDateTime;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * One READ COMMITTED transaction on a connection of its own, given back when it ends.
 *
 * <p>The inbox's own statements run as plain JDBC on the handle's connection. Statements that
 * return nothing and need not be answered on their own wait and travel in front of the next
 * one, in its round trip: the transaction's settings (the driver sends the {@code BEGIN} with
 * them) and each savepoint, which the engine always follows with a claim. A call then costs
 * the round trips a hand-written transaction costs (claim, effect, commit). A release is sent
 * at once: an effect may leave the transaction aborted, and only a release answered on its own
 * blames that on the message it belongs to.
 */
final class PostgresTransaction implements StoreTransaction<Handle> {

    // RETURNING tells in the same statement whether this call inserted the row. Under READ COMMITTED
    // a claim that meets another transaction's uncommitted row of the same id waits for it to end,
    // then inserts (it rolled back) or does nothing (it committed).
    private static final String CLAIM = "INSERT INTO inbox_message (" + InboxRows.COLUMNS + ") VALUES ("
            + InboxRows.PLACEHOLDERS + ") ON CONFLICT (inbox, id) DO NOTHING RETURNING true";

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

    private final Handle handle;
    private final Connection connection;
    private final FailedStatements effectFailures;
    private final StringBuilder unsent;
    private int savepoints;
    private boolean ended;

    PostgresTransaction(Handle handle, String transactionSettings) {
        this.handle = handle;
        this.unsent = new StringBuilder(transactionSettings);
        this.connection = handle.getConnection();
        this.effectFailures = FailedStatements.watch(handle);
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
                    + " PostgreSQL aborted the transaction, so nothing of it can commit. It was rolled back and"
                    + " nothing was recorded. Run a statement that may fail inside a savepoint of the effect's"
                    + " own", effectFailures.last());
        }
    }

    private boolean isAborted() {
        try {
            if (connection.isWrapperFor(BaseConnection.class)) {
                return connection.unwrap(BaseConnection.class).getTransactionState() == TransactionState.FAILED;
            }
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, "reading the transaction's state");
        }
        // Not pgjdbc's own connection: ask the server, which refuses any statement in an aborted transaction.
        try (Statement probe = connection.createStatement()) {
            probe.execute(first("SELECT 1"));
            return false;
        } catch (SQLException e) {
            if (PostgresErrors.IN_FAILED_SQL_TRANSACTION.equals(e.getSQLState())) {
                return true;
            }
            throw PostgresErrors.translate(e, "reading the transaction's state");
        }
    }

    @Override
    public Handle handle() {
        if (!unsent.isEmpty()) {
            run(takeUnsent(), "beginning the transaction");
        }
        return handle;
    }

    /** {@code sql} with the statements that wait to be sent in front of it. */
    private String first(String sql) {
        return unsent.isEmpty() ? sql : takeUnsent() + "; " + sql;
    }

    private String takeUnsent() {
        String statements = unsent.toString();
        unsent.setLength(0);
        return statements;
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
                Optional<InboxRecord> stored = InboxRows.find(connection, inbox, id, PostgresStore.TIME);
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
        try (PreparedStatement claim = connection.prepareStatement(first(CLAIM))) {
            InboxRows.bindClaim(claim, inbox, id, fingerprint, content, receivedAt, PostgresStore.TIME);
            // The settings in front answer first, without rows; the claim's rows come last.
            boolean rows = claim.execute();
            while (!rows && claim.getUpdateCount() != -1) {
                rows = claim.getMoreResults();
            }
            if (!rows) {
                throw new SQLException("the claim returned no result set");
            }
            try (ResultSet inserted = claim.getResultSet()) {
                return inserted.next();
            }
        }
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        try {
            handle();
            return InboxRows.horizon(connection, inbox, PostgresStore.TIME);
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, "reading the horizon");
        }
    }

    @Override
    public void savepoint() {
        effectFailures.forget();
        savepoints++;
        unsent.append(unsent.isEmpty() ? "" : "; ").append("SAVEPOINT inbox_").append(savepoints);
    }

    @Override
    public void releaseSavepoint() {
        checkNotAborted();
        execute("RELEASE SAVEPOINT inbox_" + savepoints, "releasing a savepoint");
        savepoints--;
    }

    @Override
    public void rollbackToSavepoint() {
        // This also lifts the abort that any failed statement since the savepoint left on the
        // whole transaction, so the next message of a batch can go on.
        execute("ROLLBACK TO SAVEPOINT inbox_" + savepoints + "; RELEASE SAVEPOINT inbox_" + savepoints,
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
            throw PostgresErrors.translate(e, doing, connection);
        }
    }

    @Override
    public void raiseHorizon(String inbox, Instant cutoff) {
        try {
            handle().createUpdate(RAISE_HORIZON).bind("inbox", inbox).bind("cutoff", PostgresStore.utc(cutoff)).execute();
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, "raising the horizon");
        }
    }

    @Override
    public PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
        try {
            return PurgeBatch.of(handle().createQuery(DELETE_OLDEST)
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

    @Override
    public void commit() {
        checkNotAborted();
        try {
            handle.commit();
        } catch (JdbiException e) {
            if (PostgresErrors.rolledBackAtCommit(e)) {
                // The server answered COMMIT with an error and rolled back: a definite failure.
                throw PostgresErrors.translate(e, "committing");
            }
            // The COMMIT may have reached the server and committed before the answer was lost.
            OutcomeUnknownException unknown = new OutcomeUnknownException("PostgreSQL did not confirm the COMMIT"
                    + " (SQLState " + PostgresErrors.sqlState(e) + "); the message may or may not be applied,"
                    + " and delivering it again tells which: " + PostgresErrors.describe(e), e);
            end(unknown);
            throw unknown;
        }
        end(null);
    }

    @Override
    public void rollback() {
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
