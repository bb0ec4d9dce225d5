package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.JdbcInboxStore;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import dev.idempotent.inbox.spi.jdbc.TimeColumn;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
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
 * serialised by PostgreSQL itself, on the primary key of the table of records ({@code inbox_message}
 * by default); calls on different ids run in parallel. Every statement names its tables through
 * the inbox's {@link InboxTables}, qualified with the schema when one is given, so none depends on
 * the connection's {@code search_path} except, without a schema, for where the tables are.
 */
final class PostgresStore extends JdbcInboxStore<Handle> {

    /** Where the migrations are for migration tools, for messages. */
    static final String MIGRATION = "Flyway location classpath:dev/idempotent/inbox/postgres/flyway for the default"
            + " names, or classpath:dev/idempotent/inbox/postgres/flyway-prefixed with placeholder "
            + SchemaMigrations.PLACEHOLDER + " set to the table prefix; or the Liquibase changelog"
            + " dev/idempotent/inbox/postgres/liquibase/inbox-changelog.xml for the default names, or"
            + " dev/idempotent/inbox/postgres/liquibase/inbox-changelog-prefixed.xml with parameter "
            + SchemaMigrations.PLACEHOLDER;

    static final Logger log = LoggerFactory.getLogger(PostgresStore.class);

    static final TimeColumn TIME = TimeColumn.TIMESTAMP_UTC;

    // Serialises first use among processes that start together on an empty schema: concurrent
    // CREATE TABLE IF NOT EXISTS of one table can fail on the catalog's unique index. The second
    // key is the schema and the prefix, so first uses of other tables do not wait for each other.
    private static final int SCHEMA_LOCK_CLASS = 0x1b0c5e1;

    private final Jdbi jdbi;
    private final Duration busyTimeout;
    private final PostgresStatements statements;
    private final PostgresTransaction.Begin readWrite;
    private final PostgresTransaction.Begin readOnly;

    PostgresStore(Jdbi jdbi, Duration busyTimeout, SchemaMode schemaMode, InboxTables tables) {
        super(TIME, tables);
        // Before the first handle is opened: an effect's commit or rollback through Jdbi is refused.
        this.jdbi = EffectGuard.install(jdbi);
        this.busyTimeout = busyTimeout;
        this.statements = new PostgresStatements(tables);
        this.readWrite = PostgresTransaction.Begin.of(begin(busyTimeout, false), statements);
        this.readOnly = PostgresTransaction.Begin.of(begin(busyTimeout, true), statements);
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
            return PostgresTransaction.own(handle, statements, readWrite, readOnly);
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
        return PostgresJoinedTransaction.join(callerHandle, statements, lockTimeout(busyTimeout));
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

    /**
     * Schema mode CREATE: runs the steps the tables lack, and nothing when they lack none. Tables
     * of a newer, incompatible version are refused before anything. The steps run in one
     * transaction under a lock per schema and prefix, in the inbox's schema (a {@code SET LOCAL
     * search_path}, which ends with the transaction, so a pooled connection goes back as it came),
     * and the recorded levels are read again under the lock: another process may have run them.
     */
    private void createSchema(Handle handle) {
        InboxTables tables = tables();
        try {
            Map<String, SchemaMigrations.Recorded> recorded = recorded(handle);
            SchemaMigrations.refuseIncompatible(recorded, tables);
            if (SchemaMigrations.pending(recorded).isEmpty()) {
                // Tables a migration tool made, or an earlier first use: no DDL, no lock.
                return;
            }
            handle.begin();
            handle.createQuery("SELECT set_config('lock_timeout', :timeout, true)")
                    .bind("timeout", lockTimeout(busyTimeout))
                    .mapTo(String.class)
                    .one();
            String schema = tables.schema().orElse(null);
            if (schema != null) {
                boolean exists = handle.createQuery("SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = :schema")
                        .bind("schema", schema)
                        .mapTo(Integer.class)
                        .one() > 0;
                if (!exists) {
                    throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING, "schema " + schema
                            + " does not exist, so the inbox has nowhere to create its " + tables.describe()
                            + "; create it (CREATE SCHEMA " + schema + ") or name an existing one", null);
                }
                // Identifiers from InboxTables are plain, checked identifiers; nothing else is written in.
                handle.execute("SET LOCAL search_path TO " + schema);
            } else if (handle.createQuery("SELECT current_schema() IS NULL").mapTo(Boolean.class).one()) {
                throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the connection's search_path"
                        + " names no existing schema, so the inbox has nowhere to create its tables", null);
            }
            if (tables.prefix().equals(InboxTables.DEFAULT_PREFIX)) {
                // The first release's first use took a key of the schema alone; taking it too keeps
                // an instance of that release, starting at the same moment on the same empty schema,
                // from racing this one's CREATE TABLE IF NOT EXISTS (which fails on the catalog).
                handle.createQuery("SELECT pg_advisory_xact_lock(:lockClass, hashtext(coalesce(current_schema(), '')))")
                        .bind("lockClass", SCHEMA_LOCK_CLASS)
                        .mapTo(String.class)
                        .one();
            }
            handle.createQuery("SELECT pg_advisory_xact_lock(:lockClass, hashtext(current_schema() || '.' || :prefix))")
                    .bind("lockClass", SCHEMA_LOCK_CLASS)
                    .bind("prefix", tables.prefix())
                    .mapTo(String.class)
                    .one();
            recorded = recorded(handle);
            SchemaMigrations.refuseIncompatible(recorded, tables);
            refuseForeignTables(handle);
            List<SchemaMigrations.Step> pending = SchemaMigrations.pending(recorded);
            for (SchemaMigrations.Step step : pending) {
                handle.createScript(SchemaMigrations.script(PostgresStore.class, step, tables)).execute();
            }
            handle.commit();
            if (!pending.isEmpty()) {
                log.debug("ran schema steps {} on the {}", pending, tables.describe());
            }
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

    /**
     * Refuses, before any DDL, tables of the inbox's names that are not the inbox's: without
     * {@code <prefix>schema}, which every step's script creates first, a table named
     * {@code <prefix>message} (or horizon, or kafka_offset) belongs to someone else, such as the
     * user's own table that the prefix happens to name. The steps would skip creating it, index it
     * and add columns to it.
     */
    private void refuseForeignTables(Handle handle) {
        InboxTables tables = tables();
        // Where the steps create their tables: the inbox's schema, or the first of the search_path.
        List<String> existing = handle.createQuery("SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n"
                        + " ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname IN (<names>)"
                        + " ORDER BY c.relname")
                .bindList("names", List.of(tables.name("schema"), tables.name("message"), tables.name("horizon"),
                        tables.name("kafka_offset")))
                .mapTo(String.class)
                .list();
        if (!existing.isEmpty() && !existing.contains(tables.name("schema"))) {
            String where = tables.schema().map(schema -> "schema " + schema).orElse("the connection's schema");
            throw new InboxStorageException(InboxStorageException.Kind.OTHER, where + " has "
                    + (existing.size() > 1 ? "tables " : "table ") + String.join(", ", existing) + " but no "
                    + tables.name("schema") + ", so " + (existing.size() > 1 ? "they are" : "it is")
                    + " not the inbox's; nothing was created or changed. Choose a table prefix whose names are free"
                    + " (InboxTables.prefix), or rename the table", null);
        }
    }

    /**
     * Schema mode VALIDATE: the tables are at the level this release knows or a newer revision of
     * its version, and every table the inbox writes is there. Runs no DDL and takes no lock.
     */
    private void validateSchema(Handle handle) {
        InboxTables tables = tables();
        try {
            String where = "schema " + tables.schema().orElseGet(() ->
                    handle.createQuery("SELECT coalesce(current_schema(), '(none)')").mapTo(String.class).one());
            SchemaMigrations.validate(recorded(handle), tables, where, MIGRATION);
            List<String> missing = List.of(tables.messageTable(), tables.horizonTable()).stream()
                    .filter(table -> !exists(handle, table))
                    .collect(Collectors.toList());
            if (!missing.isEmpty()) {
                throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING, "table "
                        + String.join(" and ", missing) + " is missing in " + where + ", though "
                        + tables.schemaTable() + " records the inbox's schema; restore it from the migrations ("
                        + MIGRATION + "), or build the inbox with schema mode CREATE on an empty schema", null);
            }
        } catch (JdbiException e) {
            throw PostgresErrors.translate(e, "checking the inbox schema");
        }
    }

    /** Whether {@code table}, as statements name it, exists where they would find it. */
    private static boolean exists(Handle handle, String table) {
        return handle.createQuery("SELECT to_regclass(:table) IS NOT NULL").bind("table", table).mapTo(Boolean.class).one();
    }

    /** What {@code <prefix>schema} records, or nothing when the table is not there yet. */
    private Map<String, SchemaMigrations.Recorded> recorded(Handle handle) {
        // Two statements: a query naming a missing table fails even where it would not read it.
        if (!exists(handle, tables().schemaTable())) {
            return Map.of();
        }
        try {
            return SchemaMigrations.read(handle.getConnection(), tables());
        } catch (SQLException e) {
            throw PostgresErrors.translate(e, "reading the inbox's schema versions");
        }
    }
}
