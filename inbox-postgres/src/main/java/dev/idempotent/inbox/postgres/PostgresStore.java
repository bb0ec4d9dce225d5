package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.TimeColumn;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.statement.SqlLogger;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jdbi.v3.core.statement.StatementContext;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL storage behind {@link PostgresInbox}.
 *
 * <p>Every transaction takes a connection of its own from the user's {@link Jdbi} and gives it
 * back when it ends, so the pool (if any) decides how many calls run at once. Calls on one id are
 * serialised by PostgreSQL itself, on the primary key of {@code inbox_message}; calls on different
 * ids run in parallel.
 */
final class PostgresStore implements InboxStore<Handle> {

    static final int SCHEMA_VERSION = 1;
    static final String SCHEMA_RESOURCE = "schema-v1.sql";

    private static final Logger log = LoggerFactory.getLogger(PostgresStore.class);

    // RETURNING tells in the same statement whether this call inserted the row. Under READ COMMITTED
    // a claim that meets another transaction's uncommitted row of the same id waits for it to end,
    // then inserts (it rolled back) or does nothing (it committed).
    private static final String CLAIM = "INSERT INTO inbox_message (" + InboxRows.COLUMNS + ") VALUES ("
            + InboxRows.PLACEHOLDERS + ") ON CONFLICT (inbox, id) DO NOTHING RETURNING true";

    private static final String SELECT = "SELECT " + InboxRows.COLUMNS + " FROM inbox_message WHERE inbox = :inbox AND id = :id";

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

    // Serialises first use among processes that start together on an empty schema: concurrent
    // CREATE TABLE IF NOT EXISTS of one table can fail on the catalog's unique index. The second
    // key is the schema, so first uses in different schemas do not wait for each other.
    private static final int SCHEMA_LOCK_CLASS = 0x1b0c5e1;

    private final Jdbi jdbi;
    private final Duration busyTimeout;
    private final String transactionSettings;

    PostgresStore(Jdbi jdbi, Duration busyTimeout) {
        this.jdbi = jdbi;
        this.busyTimeout = busyTimeout;
        this.transactionSettings = transactionSettings(busyTimeout);
        try (Handle handle = open("opening the database")) {
            createSchema(handle);
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, "closing the schema connection");
        }
    }

    @Override
    public Writers writers() {
        return Writers.CONCURRENT;
    }

    @Override
    public StoreTransaction<Handle> begin() {
        Handle handle = open("opening a connection");
        try {
            if (handle.isInTransaction()) {
                throw new InboxException("the connection the Jdbi handed out is already in a transaction (or has"
                        + " autocommit off, which Jdbi treats the same); Jdbi would silently join it, and the inbox's"
                        + " isolation level and lock timeout would never apply. Give the inbox a Jdbi whose"
                        + " connections come in autocommit mode with no transaction open");
            }
            handle.begin();
        } catch (RuntimeException e) {
            RuntimeException failure = e instanceof JdbiException jdbiFailure
                    ? PostgresErrors.translate(jdbiFailure, "beginning the transaction") : e;
            discard(handle, failure);
            throw failure;
        }
        return new PostgresTransaction(handle);
    }

    /**
     * What every transaction of the inbox sets before its first statement.
     *
     * <p>READ COMMITTED, whatever the database's default: each statement sees what committed before
     * it began, so the read after a claim that waited for another transaction sees that
     * transaction's row. Under REPEATABLE READ or SERIALIZABLE the waiting claim would fail with a
     * serialization error instead, and the read could not see the row. The lock timeout is local
     * to the transaction, so a pooled connection goes back as it came.
     */
    static String transactionSettings(Duration busyTimeout) {
        return "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '"
                + lockTimeout(busyTimeout) + "'";
    }

    /**
     * The {@code lock_timeout} setting for a busy timeout. PostgreSQL reads 0 as "wait forever",
     * so a zero busy timeout becomes the shortest wait it knows, one millisecond.
     */
    static String lockTimeout(Duration busyTimeout) {
        long millis = busyTimeout.toMillis();
        if (busyTimeout.compareTo(Duration.ofMillis(millis)) > 0) {
            millis++; // round up: never wait less than asked
        }
        return Math.max(1, millis) + "ms";
    }

    @Override
    public Optional<InboxRecord> find(String inbox, String id) {
        return read(handle -> select(handle, inbox, id), "reading the inbox record");
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        return read(handle -> horizon(handle, inbox), "reading the horizon");
    }

    @Override
    public Optional<Instant> oldestReceivedAt(String inbox) {
        return read(handle -> handle.createQuery("SELECT MIN(received_at) FROM inbox_message WHERE inbox = :inbox")
                .bind("inbox", inbox)
                .map((rs, ctx) -> rs.getObject(1, OffsetDateTime.class))
                .findOne()
                .map(OffsetDateTime::toInstant), "reading the oldest row");
    }

    private static Optional<Instant> horizon(Handle handle, String inbox) {
        return handle.createQuery("SELECT horizon FROM inbox_horizon WHERE inbox = :inbox")
                .bind("inbox", inbox)
                .map((rs, ctx) -> rs.getObject(1, OffsetDateTime.class))
                .findOne()
                .map(OffsetDateTime::toInstant);
    }

    /** Runs {@code query} on a connection of its own, outside any write transaction. */
    private <T> T read(HandleCallback<T, RuntimeException> query, String doing) {
        try (Handle handle = open("opening a connection")) {
            return query.withHandle(handle);
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, doing);
        }
    }

    private static OffsetDateTime utc(Instant instant) {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }

    /** Closes nothing: the connections belong to the user's Jdbi. */
    @Override
    public void close() {}

    private Handle open(String doing) {
        try {
            return jdbi.open();
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, doing);
        }
    }

    /** Closes a handle that failed; closing rolls back whatever it still had open. */
    private static void discard(Handle handle, Throwable failure) {
        try {
            if (handle.isInTransaction()) {
                handle.rollback();
            }
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
        try {
            handle.close();
        } catch (RuntimeException e) {
            // The connection is thrown away because it is in doubt; so is its close.
            failure.addSuppressed(e);
        }
    }

    private void createSchema(Handle handle) {
        try {
            Integer found = readVersion(handle);
            if (found != null) {
                // A schema a migration tool created, or an earlier first use: no DDL, no lock.
                checkVersion(found);
                return;
            }
            handle.begin();
            handle.createQuery("SELECT set_config('lock_timeout', :timeout, true)")
                    .bind("timeout", lockTimeout(busyTimeout))
                    .mapTo(String.class)
                    .one();
            handle.createQuery("SELECT pg_advisory_xact_lock(:lockClass, hashtext(coalesce(current_schema(), '')))")
                    .bind("lockClass", SCHEMA_LOCK_CLASS)
                    .mapTo(String.class)
                    .one();
            if (handle.createQuery("SELECT current_schema() IS NULL").mapTo(Boolean.class).one()) {
                throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the connection's search_path"
                        + " names no existing schema, so the inbox has nowhere to create its tables", null);
            }
            handle.createScript(schemaScript()).execute();
            Integer version = readVersion(handle);
            checkVersion(version == null ? SCHEMA_VERSION : version);
            handle.commit();
            log.debug("inbox schema version {} is in place", version);
        } catch (RuntimeException e) {
            RuntimeException failure = e instanceof JdbiException jdbiFailure
                    ? PostgresErrors.translate(jdbiFailure, "creating the inbox schema") : e;
            try {
                if (handle.isInTransaction()) {
                    handle.rollback();
                }
            } catch (RuntimeException rollbackFailure) {
                failure.addSuppressed(rollbackFailure);
            }
            throw failure;
        }
    }

    /** The recorded schema version, or {@code null} when the schema has no inbox tables yet. */
    private static Integer readVersion(Handle handle) {
        // Two statements: a query naming a missing table fails even where it would not read it.
        boolean exists = handle.createQuery("SELECT to_regclass('inbox_schema') IS NOT NULL").mapTo(Boolean.class).one();
        if (!exists) {
            return null;
        }
        return handle.createQuery("SELECT version FROM inbox_schema WHERE component = 'inbox'")
                .mapTo(Integer.class)
                .findOne()
                .orElse(null);
    }

    private static void checkVersion(int version) {
        if (version > SCHEMA_VERSION) {
            throw new InboxStorageException(InboxStorageException.Kind.NEWER_SCHEMA,
                    "the database holds inbox schema version " + version + ", written by a newer version of this"
                            + " library; this version knows schema " + SCHEMA_VERSION + " at most", null);
        }
    }

    /** The text of the schema script shipped in this jar. */
    static String schemaScript() {
        return InboxRows.script(PostgresStore.class, SCHEMA_RESOURCE);
    }

    private static Optional<InboxRecord> select(Handle handle, String inbox, String id) {
        return handle.createQuery(SELECT)
                .bind("inbox", inbox)
                .bind("id", id)
                .map((rs, ctx) -> InboxRows.read(rs, TimeColumn.TIMESTAMP_UTC))
                .findOne();
    }

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
    private final class PostgresTransaction implements StoreTransaction<Handle> {

        private final Handle handle;
        private final Connection connection;
        private final FailedStatements effectFailures;
        private final StringBuilder unsent = new StringBuilder(transactionSettings);
        private int savepoints;
        private boolean ended;

        PostgresTransaction(Handle handle) {
            this.handle = handle;
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
                    Optional<InboxRecord> stored = select(handle, inbox, id);
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
                InboxRows.bindClaim(claim, inbox, id, fingerprint, content, receivedAt, TimeColumn.TIMESTAMP_UTC);
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
                return PostgresStore.horizon(handle(), inbox);
            } catch (JdbiException e) {
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
                throw PostgresErrors.translate(e, doing);
            }
        }

        @Override
        public void raiseHorizon(String inbox, Instant cutoff) {
            try {
                handle().createUpdate(RAISE_HORIZON).bind("inbox", inbox).bind("cutoff", utc(cutoff)).execute();
            } catch (JdbiException e) {
                throw PostgresErrors.translate(e, "raising the horizon");
            }
        }

        @Override
        public PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
            try {
                return PurgeBatch.of(handle().createQuery(DELETE_OLDEST)
                        .bind("inbox", inbox)
                        .bind("cutoff", utc(cutoff))
                        .bind("afterReceivedAt", after == null ? OffsetDateTime.MIN : utc(after.receivedAt()))
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
                failure = PostgresErrors.translate(e, "rolling back");
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
                discard(handle, failure);
            } else {
                closeQuietly(handle);
            }
        }

        private void closeQuietly(Handle handle) {
            try {
                handle.close();
            } catch (JdbiException e) {
                // Committed, rolled back or lost already: a failing close cannot change what happened.
                log.debug("closing an inbox connection failed", e);
            }
        }
    }

    /**
     * Remembers the last statement that failed on a handle, through Jdbi's {@link SqlLogger}, so that
     * an aborted transaction can be blamed on the failure an effect caught. The handle's configuration
     * is its own copy of the Jdbi's and the handle is closed with the transaction, so the user's
     * logger, which still sees every statement, is left as it was.
     */
    private static final class FailedStatements implements SqlLogger {

        private final SqlLogger delegate;
        private SQLException last;

        private FailedStatements(SqlLogger delegate) {
            this.delegate = delegate;
        }

        static FailedStatements watch(Handle handle) {
            SqlStatements statements = handle.getConfig(SqlStatements.class);
            FailedStatements watcher = new FailedStatements(statements.getSqlLogger());
            statements.setSqlLogger(watcher);
            return watcher;
        }

        /** The last failure seen, or {@code null} if the effect ran its statements some other way. */
        SQLException last() {
            return last;
        }

        /** Forgets earlier failures: a savepoint begins a message whose failures are its own. */
        void forget() {
            last = null;
        }

        @Override
        public void logBeforeExecution(StatementContext context) {
            delegate.logBeforeExecution(context);
        }

        @Override
        public void logAfterExecution(StatementContext context) {
            delegate.logAfterExecution(context);
        }

        @Override
        public void logException(StatementContext context, SQLException ex) {
            last = ex;
            delegate.logException(context, ex);
        }
    }
}
