package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.JdbcInboxStore;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import dev.idempotent.inbox.spi.jdbc.TimeColumn;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;

/**
 * The SQLite storage behind {@link SqliteInbox}.
 *
 * <p>All writes go through one connection. SQLite admits one writer per file anyway, so the store
 * declares {@link Writers#ONE} and the core queues this process's callers in arrival order and
 * opens one transaction at a time; the writer connection is only ever used by the thread the core
 * lets in. Other processes (and other connections of the application) are kept out by
 * {@code BEGIN IMMEDIATE} and wait in SQLite's busy handler, for at most the busy timeout.
 *
 * <p>The connection stays in JDBC autocommit mode and transactions are opened and closed with
 * explicit {@code BEGIN IMMEDIATE} and {@code COMMIT}: in sqlite-jdbc's own transaction mode,
 * {@code commit()} at once begins the next {@code IMMEDIATE} transaction, so an idle connection
 * would keep the write lock and starve every other writer.
 *
 * <p>The statements of every transaction ({@code BEGIN IMMEDIATE}, the claim, the read of a stored
 * row, savepoints, {@code COMMIT}, {@code ROLLBACK}) are prepared once per writer connection and
 * run as plain JDBC: preparing them afresh for every message, as Jdbi does, cost more than the
 * SQLite work they do. The effect itself still gets the Jdbi {@link Handle}, whose statements are
 * kept for the next message too (see {@link ReusingStatementBuilder}).
 */
final class SqliteStore extends JdbcInboxStore<Handle> {

    static final TimeColumn TIME = TimeColumn.EPOCH_MILLIS;

    private static final String PACKAGE = "dev/idempotent/inbox/sqlite/";
    /** The Flyway location of the scripts with the default names. */
    static final String FLYWAY = "classpath:" + PACKAGE + SchemaMigrations.DEFAULT_NAMES.replace("/", "");
    /** The Flyway location of the templates, for placeholder {@code inbox_table_prefix}. */
    static final String FLYWAY_PREFIXED = "classpath:" + PACKAGE + SchemaMigrations.TEMPLATES.replace("/", "");
    /** The Liquibase changelog of the default names. */
    static final String LIQUIBASE = PACKAGE + "liquibase/inbox-changelog.xml";
    /** The Liquibase changelog of the templates, for parameter {@code inbox_table_prefix}. */
    static final String LIQUIBASE_PREFIXED = PACKAGE + "liquibase/inbox-changelog-prefixed.xml";

    private final Jdbi jdbi;
    private final Duration busyTimeout;
    private final SqliteSql sql;
    private final WalCheckpointer checkpointer;
    // The main file of the writer connection, as SQLite names it.
    private final String file;
    // Callers' connections already found to be on that file, forgotten with the connections.
    private final Set<Connection> joinedConnections = Collections.newSetFromMap(
            Collections.synchronizedMap(new WeakHashMap<>()));
    // Used by one thread at a time, the one the core lets open a transaction; the core's queue
    // orders those uses. Null after a connection in doubt was dropped, until the next transaction.
    private SqliteWriter writer;

    /**
     * @throws IllegalArgumentException if {@code tables} name a schema, which SQLite has not; before
     *     the file is opened
     */
    SqliteStore(Jdbi jdbi, Duration busyTimeout, SchemaMode schemaMode, InboxTables tables) {
        super(TIME, refuseSchema(tables));
        this.sql = new SqliteSql(tables);
        // Before the first handle is opened: an effect's commit or rollback through Jdbi is refused.
        this.jdbi = EffectGuard.install(jdbi);
        this.busyTimeout = busyTimeout;
        // The statements name the inbox's tables, so they can be prepared only once the schema exists.
        Handle handle = openConfigured();
        try {
            prepareSchema(handle, schemaMode);
            file = SqliteFiles.mainFile(handle.getConnection());
            writer = new SqliteWriter(handle, sql);
        } catch (SQLException e) {
            closeQuietly(handle);
            throw SqliteErrors.translate(e, "reading the database's file name");
        } catch (RuntimeException e) {
            closeQuietly(handle);
            throw e;
        }
        jdbi.installPlugin(new WriteLocks.Guard(file));
        this.checkpointer = new WalCheckpointer(jdbi);
    }

    @Override
    public Writers writers() {
        return Writers.ONE;
    }

    @Override
    public StoreTransaction<Handle> begin() {
        WriteLocks.refuseIfHeld(file, "beginning a transaction of an inbox on the same file");
        SqliteWriter current = writer();
        current.run(current.begin, "beginning the transaction");
        return new SqliteTransaction(current, file, checkpointer, this::discardWriter);
    }

    /**
     * The caller's transaction on {@code callerHandle}, a connection of its own to this inbox's
     * file with autocommit off (see {@link SqliteJoinedTransaction}).
     */
    @Override
    public StoreTransaction<Handle> join(Handle callerHandle) {
        return SqliteJoinedTransaction.join(callerHandle, file, sql, busyTimeout, joinedConnections);
    }

    @Override
    protected <T> T onConnection(InboxRows.Query<T> query) throws SQLException {
        return jdbi.withHandle(handle -> query.run(handle.getConnection()));
    }

    @Override
    protected InboxException translate(Exception failure, String doing) {
        return SqliteErrors.translate(failure, doing);
    }

    @Override
    public void close() {
        discardWriter();
        checkpointer.close();
    }

    private SqliteWriter writer() {
        if (writer != null && writer.inDoubt()) {
            // One of its statements failed, and sqlite-jdbc closes such a statement (seen after the
            // file was made read-only while open): without a fresh writer every later transaction
            // would fail with "statement is not executing".
            discardWriter();
        }
        if (writer == null) {
            Handle handle = openConfigured();
            try {
                writer = new SqliteWriter(handle, sql);
            } catch (RuntimeException e) {
                closeQuietly(handle);
                throw e;
            }
        }
        return writer;
    }

    private Handle openConfigured() {
        Handle handle;
        try {
            handle = jdbi.open();
        } catch (JdbiException e) {
            throw SqliteErrors.translate(e, "opening the database");
        }
        try {
            configure(handle);
        } catch (RuntimeException e) {
            closeQuietly(handle);
            throw e;
        }
        return handle;
    }

    /** Drops the writer connection and its statements; closing it rolls back whatever it still had open. */
    private void discardWriter() {
        if (writer != null) {
            try {
                writer.close();
            } finally {
                writer = null;
            }
        }
    }

    static void closeQuietly(Handle handle) {
        try {
            handle.close();
        } catch (JdbiException ignored) {
            // The connection is being thrown away because it is in doubt; its close is too.
        }
    }

    private void configure(Handle handle) {
        execute(handle, "PRAGMA busy_timeout = " + busyTimeout.toMillis(), "setting the busy timeout");
        // An ACK is sent after commit, so the commit must survive a power loss: WAL with FULL sync.
        String mode;
        try {
            mode = handle.createQuery("PRAGMA journal_mode = WAL").mapTo(String.class).one();
        } catch (JdbiException e) {
            throw SqliteErrors.translate(e, "switching to WAL journal mode");
        }
        if (!"wal".equalsIgnoreCase(mode)) {
            throw new InboxStorageException(readOnly(handle)
                    ? InboxStorageException.Kind.READ_ONLY : InboxStorageException.Kind.OTHER,
                    "the inbox needs journal_mode=WAL but the database stays in '" + mode + "'"
                            + (readOnly(handle) ? " because it is read-only" : "")
                            + "; in-memory and read-only databases cannot hold an inbox", null);
        }
        execute(handle, "PRAGMA synchronous = FULL", "setting synchronous=FULL");
        execute(handle, "PRAGMA wal_autocheckpoint = " + WalCheckpointer.WRITER_THRESHOLD_PAGES,
                "setting the checkpoint threshold");
    }

    private static boolean readOnly(Handle handle) {
        try {
            return handle.getConnection().isReadOnly();
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * Where the schema is for migration tools, for messages: both Flyway locations and both
     * Liquibase changelogs, with the prefix these tables need.
     */
    static String migration(InboxTables tables) {
        return "Flyway location " + FLYWAY + " (default names) or " + FLYWAY_PREFIXED + " with placeholder "
                + SchemaMigrations.PLACEHOLDER + "=" + tables.prefix() + ", or the Liquibase changelog " + LIQUIBASE
                + " (default names) or " + LIQUIBASE_PREFIXED + " with parameter " + SchemaMigrations.PLACEHOLDER + "="
                + tables.prefix();
    }

    private static InboxTables refuseSchema(InboxTables tables) {
        if (tables.schema().isPresent()) {
            throw new IllegalArgumentException("SQLite has no schemas, so the inbox's tables cannot be put in schema '"
                    + tables.schema().get() + "': name them with a prefix alone (InboxTables.prefix(\"" + tables.prefix()
                    + "\")), in the file the inbox is built on");
        }
        return tables;
    }

    private void prepareSchema(Handle handle, SchemaMode mode) {
        switch (mode) {
            case CREATE -> createSchema(handle);
            case VALIDATE -> validateSchema(handle);
            case NONE -> { }
        }
    }

    /**
     * Runs the pending schema steps' templates, filled in with this inbox's prefix, in one
     * {@code BEGIN IMMEDIATE} transaction: the file's write lock keeps two processes that start at
     * once from running a step twice, as the second reads the level the first recorded. Over tables
     * at the level this release knows it runs no DDL.
     */
    private void createSchema(Handle handle) {
        execute(handle, "BEGIN IMMEDIATE", "beginning the schema transaction");
        try {
            Map<String, SchemaMigrations.Recorded> recorded = readSchema(handle);
            SchemaMigrations.refuseIncompatible(recorded, tables());
            List<SchemaMigrations.Step> pending = SchemaMigrations.pending(recorded);
            if (!pending.isEmpty()) {
                refuseForeignTables(handle);
            }
            for (SchemaMigrations.Step step : pending) {
                handle.createScript(SchemaMigrations.script(SqliteStore.class, step, tables())).execute();
            }
            if (pending.isEmpty()) {
                // A write that changes nothing: it finds a read-only file out now rather than at the
                // first message, and runs no DDL.
                handle.execute("UPDATE " + tables().schemaTable() + " SET version = version WHERE 0");
            }
            execute(handle, "COMMIT", "creating the inbox schema");
        } catch (RuntimeException e) {
            try {
                handle.execute("ROLLBACK");
            } catch (JdbiException rollbackFailure) {
                e.addSuppressed(rollbackFailure);
            }
            throw e instanceof JdbiException jdbiFailure
                    ? SqliteErrors.translate(jdbiFailure, "creating the inbox schema") : e;
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
        List<String> existing = handle.createQuery("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
                        + " AND name IN (<names>) ORDER BY name")
                .bindList("names", List.of(tables.name("schema"), tables.name("message"), tables.name("horizon"),
                        tables.name("kafka_offset")))
                .mapTo(String.class)
                .list();
        if (!existing.isEmpty() && !existing.contains(tables.name("schema"))) {
            throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the database file has "
                    + (existing.size() > 1 ? "tables " : "table ") + String.join(", ", existing) + " but no "
                    + tables.name("schema") + ", so " + (existing.size() > 1 ? "they are" : "it is")
                    + " not the inbox's; nothing was created or changed. Choose a table prefix whose names are free"
                    + " (InboxTables.prefix), or rename the table", null);
        }
    }

    private void validateSchema(Handle handle) {
        try {
            SchemaMigrations.validate(readSchema(handle), tables(), "the database file", migration(tables()));
        } catch (JdbiException e) {
            throw SqliteErrors.translate(e, "checking the inbox schema");
        }
    }

    /** Each component's row of {@code <prefix>schema}; empty when the file has no such table yet. */
    private Map<String, SchemaMigrations.Recorded> readSchema(Handle handle) {
        boolean exists = handle.createQuery("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = :name")
                .bind("name", tables().name("schema"))
                .mapTo(Integer.class)
                .one() > 0;
        if (!exists) {
            return Map.of();
        }
        try {
            return SchemaMigrations.read(handle.getConnection(), tables());
        } catch (SQLException e) {
            throw SqliteErrors.translate(e, "reading the inbox schema's version");
        }
    }

    private static void execute(Handle handle, String sql, String doing) {
        try {
            handle.execute(sql);
        } catch (JdbiException e) {
            throw SqliteErrors.translate(e, doing);
        }
    }
}
