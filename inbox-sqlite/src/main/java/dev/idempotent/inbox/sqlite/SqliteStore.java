package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.JdbcInboxStore;
import dev.idempotent.inbox.spi.jdbc.TimeColumn;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
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

    static final int SCHEMA_VERSION = 1;

    static final TimeColumn TIME = TimeColumn.EPOCH_MILLIS;

    /** Where the schema is for migration tools, for messages. */
    static final String MIGRATION = "Flyway location classpath:dev/idempotent/inbox/sqlite/flyway, or the Liquibase"
            + " changelog dev/idempotent/inbox/sqlite/liquibase/inbox-changelog.xml";

    static final String RAISE_HORIZON = """
            INSERT INTO inbox_horizon (inbox, horizon) VALUES (?, ?)
            ON CONFLICT (inbox) DO UPDATE SET horizon = max(horizon, excluded.horizon)""";

    static final String DELETE_OLDEST = """
            DELETE FROM inbox_message WHERE inbox = :inbox AND id IN (
                SELECT id FROM inbox_message
                WHERE inbox = :inbox AND received_at < :cutoff AND (received_at, id) > (:afterReceivedAt, :afterId)
                ORDER BY received_at, id LIMIT :limit)
            RETURNING received_at, id""";

    private final Jdbi jdbi;
    private final Duration busyTimeout;
    private final WalCheckpointer checkpointer;
    // The main file of the writer connection, as SQLite names it.
    private final String file;
    // Callers' connections already found to be on that file, forgotten with the connections.
    private final Set<Connection> joinedConnections = Collections.newSetFromMap(
            Collections.synchronizedMap(new WeakHashMap<>()));
    // Used by one thread at a time, the one the core lets open a transaction; the core's queue
    // orders those uses. Null after a connection in doubt was dropped, until the next transaction.
    private SqliteWriter writer;

    SqliteStore(Jdbi jdbi, Duration busyTimeout, SchemaMode schemaMode) {
        super(TIME);
        // Before the first handle is opened: an effect's commit or rollback through Jdbi is refused.
        this.jdbi = EffectGuard.install(jdbi);
        this.busyTimeout = busyTimeout;
        // The statements name the inbox's tables, so they can be prepared only once the schema exists.
        Handle handle = openConfigured();
        try {
            prepareSchema(handle, schemaMode);
            file = SqliteFiles.mainFile(handle.getConnection());
            writer = new SqliteWriter(handle);
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
        return SqliteJoinedTransaction.join(callerHandle, file, busyTimeout, joinedConnections);
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
                writer = new SqliteWriter(handle);
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

    private void prepareSchema(Handle handle, SchemaMode mode) {
        switch (mode) {
            case CREATE -> createSchema(handle);
            case VALIDATE -> validateSchema(handle);
            case NONE -> { }
        }
    }

    private void createSchema(Handle handle) {
        execute(handle, "BEGIN IMMEDIATE", "beginning the schema transaction");
        try {
            Integer found = readVersion(handle);
            if (found != null) {
                InboxRows.refuseNewerSchema(found, SCHEMA_VERSION);
            }
            // Run even over a schema in place: the script is idempotent, and its write is what finds
            // a read-only file out now rather than at the first message.
            handle.createScript(schemaScript()).execute();
            handle.createScript(InboxRows.script(SqliteStore.class, InboxRows.KAFKA_OFFSET_SCRIPT)).execute();
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

    private static void validateSchema(Handle handle) {
        try {
            InboxRows.validateSchema(readVersion(handle), SCHEMA_VERSION, table -> tableExists(handle, table),
                    "the database file", MIGRATION);
        } catch (JdbiException e) {
            throw SqliteErrors.translate(e, "checking the inbox schema");
        }
    }

    /** The recorded schema version, or {@code null} when the file has no inbox tables yet. */
    private static Integer readVersion(Handle handle) {
        if (!tableExists(handle, "inbox_schema")) {
            return null;
        }
        return handle.createQuery("SELECT version FROM inbox_schema WHERE component = 'inbox'")
                .mapTo(Integer.class)
                .findOne()
                .orElse(null);
    }

    private static boolean tableExists(Handle handle, String table) {
        return handle.createQuery("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = :name")
                .bind("name", table)
                .mapTo(Integer.class)
                .one() > 0;
    }

    /** The text of the schema script shipped in this jar, which is also its Flyway migration. */
    static String schemaScript() {
        return InboxRows.script(SqliteStore.class, InboxRows.SCHEMA_SCRIPT);
    }

    private static void execute(Handle handle, String sql, String doing) {
        try {
            handle.execute(sql);
        } catch (JdbiException e) {
            throw SqliteErrors.translate(e, doing);
        }
    }
}
