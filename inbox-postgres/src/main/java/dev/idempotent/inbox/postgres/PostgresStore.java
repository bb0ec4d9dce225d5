package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.JdbcInboxStore;
import dev.idempotent.inbox.spi.jdbc.TimeColumn;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
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
final class PostgresStore extends JdbcInboxStore<Handle> {

    static final int SCHEMA_VERSION = 1;
    static final String SCHEMA_RESOURCE = InboxRows.SCHEMA_SCRIPT;

    /** Where the schema is for migration tools, for messages. */
    static final String MIGRATION = "Flyway location classpath:dev/idempotent/inbox/postgres/flyway, or the"
            + " Liquibase changelog dev/idempotent/inbox/postgres/liquibase/inbox-changelog.xml";

    static final Logger log = LoggerFactory.getLogger(PostgresStore.class);

    static final TimeColumn TIME = TimeColumn.TIMESTAMP_UTC;

    // Serialises first use among processes that start together on an empty schema: concurrent
    // CREATE TABLE IF NOT EXISTS of one table can fail on the catalog's unique index. The second
    // key is the schema, so first uses in different schemas do not wait for each other.
    private static final int SCHEMA_LOCK_CLASS = 0x1b0c5e1;

    private final Jdbi jdbi;
    private final Duration busyTimeout;
    private final PostgresTransaction.Begin readWrite;
    private final PostgresTransaction.Begin readOnly;

    PostgresStore(Jdbi jdbi, Duration busyTimeout, SchemaMode schemaMode) {
        super(TIME);
        // Before the first handle is opened: an effect's commit or rollback through Jdbi is refused.
        this.jdbi = EffectGuard.install(jdbi);
        this.busyTimeout = busyTimeout;
        this.readWrite = PostgresTransaction.Begin.of(begin(busyTimeout, false));
        this.readOnly = PostgresTransaction.Begin.of(begin(busyTimeout, true));
        if (schemaMode == SchemaMode.NONE) {
            return;
        }
        try (Handle handle = open("opening the database")) {
            if (schemaMode == SchemaMode.VALIDATE) {
                validateSchema(handle);
            } else {
                createSchema(handle);
            }
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, "closing the schema connection");
        }
    }

    @Override
    public Writers writers() {
        return Writers.CONCURRENT;
    }

    /**
     * A transaction on a connection of its own. Nothing is sent yet: the transaction's {@code BEGIN}
     * travels in front of its first statement (see {@link PostgresTransaction}).
     */
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
        } catch (RuntimeException e) {
            RuntimeException failure = e instanceof JdbiException jdbiFailure
                    ? PostgresErrors.translate(jdbiFailure, "beginning the transaction") : e;
            discard(handle, failure);
            throw failure;
        }
        try {
            return PostgresTransaction.own(handle, readWrite, readOnly);
        } catch (RuntimeException e) {
            discard(handle, e);
            throw e;
        }
    }

    /**
     * The caller's transaction on {@code callerHandle}, which must have autocommit off and not be
     * aborted; its isolation level is the caller's (see {@link PostgresInbox} for what each level
     * gives a concurrent claim of the same id).
     */
    @Override
    public StoreTransaction<Handle> join(Handle callerHandle) {
        return PostgresJoinedTransaction.join(callerHandle, lockTimeout(busyTimeout));
    }

    /**
     * How every transaction of the inbox begins, in front of its first statement.
     *
     * <p>READ COMMITTED, whatever the database's or the session's default: each statement sees what
     * committed before it began, so the read after a claim that waited for another transaction
     * sees that transaction's row. Under REPEATABLE READ or SERIALIZABLE the waiting claim would
     * fail with a serialization error instead, and the read could not see the row. The level is
     * part of the {@code BEGIN} and the lock timeout is local to the transaction, so whatever an
     * earlier borrower left in a pooled connection's session, every transaction of the inbox
     * gets both, and the connection goes back as it came. On a read-only connection the inbox
     * begins as pgjdbc would have, read-only, and its claim is refused.
     */
    static String begin(Duration busyTimeout, boolean readOnly) {
        return "BEGIN ISOLATION LEVEL READ COMMITTED" + (readOnly ? " READ ONLY" : "") + "; SET LOCAL lock_timeout = '"
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
    protected <T> T onConnection(InboxRows.Query<T> query) throws SQLException {
        return jdbi.withHandle(handle -> query.run(handle.getConnection()));
    }

    @Override
    protected InboxException translate(Exception failure, String doing) {
        return PostgresErrors.translate(failure, doing);
    }

    static OffsetDateTime utc(Instant instant) {
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
    static void discard(Handle handle, Throwable failure) {
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
                InboxRows.refuseNewerSchema(found, SCHEMA_VERSION);
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
            handle.createScript(InboxRows.script(PostgresStore.class, InboxRows.KAFKA_OFFSET_SCRIPT)).execute();
            Integer version = readVersion(handle);
            InboxRows.refuseNewerSchema(version == null ? SCHEMA_VERSION : version, SCHEMA_VERSION);
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

    private static void validateSchema(Handle handle) {
        try {
            String schema = handle.createQuery("SELECT coalesce(current_schema(), '(none)')").mapTo(String.class).one();
            InboxRows.validateSchema(readVersion(handle), SCHEMA_VERSION, table -> tableExists(handle, table),
                    "schema " + schema, MIGRATION);
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, "checking the inbox schema");
        }
    }

    /** Whether {@code table} exists in the first schema of the search path, where the inbox works. */
    private static boolean tableExists(Handle handle, String table) {
        return handle.createQuery("SELECT count(*) FROM pg_catalog.pg_tables"
                        + " WHERE schemaname = current_schema() AND tablename = :table")
                .bind("table", table)
                .mapTo(Integer.class)
                .one() > 0;
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


    /** The text of the schema script shipped in this jar. */
    static String schemaScript() {
        return InboxRows.script(PostgresStore.class, SCHEMA_RESOURCE);
    }
}
