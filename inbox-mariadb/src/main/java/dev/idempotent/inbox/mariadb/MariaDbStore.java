package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.JdbcInboxStore;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import dev.idempotent.inbox.spi.jdbc.TimeColumn;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MariaDB storage behind {@link MariaDbInbox}.
 *
 * <p>Every transaction takes a connection of its own from the user's {@link Jdbi} and gives it
 * back when it ends, so the pool (if any) decides how many calls run at once. Calls on one id are
 * serialised by InnoDB itself, on the primary key of the table of records ({@code inbox_message}
 * by default); calls on different ids run in parallel.
 *
 * <p>Every statement names the tables as the inbox's {@link InboxTables} give them: qualified with
 * the database when the inbox has one, so the tables may live in another database than the
 * connection's own. Names come only from {@code InboxTables}, which admits plain identifiers only;
 * values are always bound parameters.
 */
final class MariaDbStore extends JdbcInboxStore<Handle> {

    /** Where the schema is for migration tools, for messages. */
    static final String MIGRATION = "Flyway location classpath:dev/idempotent/inbox/mariadb/flyway for the"
            + " default names, or classpath:dev/idempotent/inbox/mariadb/flyway-prefixed with placeholder"
            + " inbox_table_prefix set to the inbox's prefix; or the Liquibase changelog"
            + " dev/idempotent/inbox/mariadb/liquibase/inbox-changelog.xml, or inbox-changelog-prefixed.xml"
            + " beside it with parameter inbox_table_prefix";

    static final Logger log = LoggerFactory.getLogger(MariaDbStore.class);

    // BIGINT epoch milliseconds: exact, and free of the session time zone in which MariaDB reads
    // and writes DATETIME values.
    static final TimeColumn TIME = TimeColumn.EPOCH_MILLIS;

    // Named locks are server-wide; the database's and the prefix's name, hashed to keep within the
    // 64 characters a lock name may have, keep first uses of other tables from waiting for each other.
    private static final String SCHEMA_LOCK = "CONCAT('inbox_schema_', MD5(:tables))";

    // A no-op update on conflict: unlike INSERT IGNORE, it turns no error (a truncated value, a
    // bad character) into a warning, and it takes an exclusive lock on the existing row, so a
    // claim that meets another transaction's uncommitted claim of the id waits for it to end.
    // With the affected-rows count (useAffectedRows=true) it answers 1 for an inserted row and 0
    // for one that was there; with the driver's default found-rows count both are 1, so the store
    // refuses such connections when it opens.
    final String claim;

    // A locking read, which reads the row as last committed, whatever the transaction's snapshot.
    // A plain read takes a snapshot, and even a new one can still count the transaction that
    // committed the row as running: InnoDB marks a committing transaction committed, which lets a
    // claim take the row's lock, a moment before it takes it out of the set snapshots copy.
    private final String readClaimed;

    // The row this transaction claimed; its lock is the transaction's already.
    final String storeResult;

    // Purgers serialise on the horizon row, which only moves forward. A purge commits it raised
    // before its first delete, so an apply whose claim waited for a purge to delete an old row of
    // the same id reads the raised horizon afterwards (the engine reads it after the claim), and is
    // refused as stale; raised in the delete's transaction alone, InnoDB could let that read miss it.
    final String raiseHorizon;

    // The row comparison is spelled out: MariaDB does not turn (a, b) > (x, y) into a range of the
    // index. FOR UPDATE locks the rows (under READ COMMITTED, the matching ones only) so that the
    // delete that follows removes exactly these; MySQL has no DELETE ... RETURNING.
    final String selectOldest;

    // Followed by the placeholders of the ids a purge batch selected.
    final String deleteIds;

    // The joined claim: a plain INSERT, see MariaDbJoinedTransaction.
    final String joinedClaim;

    // The joined read of the horizon: a locking read, whatever the caller's isolation level.
    final String joinedHorizon;

    // The smallest {@code max_allowed_packet} MariaDB accepts: below it, no statement needs a check.
    private static final long SMALLEST_MAX_ALLOWED_PACKET = 1024;

    // The server's max_allowed_packet as last read, 0 before the first large result; see checkResultFits.
    private volatile long maxAllowedPacket;

    private final Jdbi jdbi;
    private final Duration busyTimeout;
    private final String lockWaitTimeout;

    MariaDbStore(Jdbi jdbi, InboxSettings settings) {
        super(TIME, settings.tables());
        InboxTables tables = settings.tables();
        String messages = tables.messageTable();
        this.claim = "INSERT INTO " + messages + " (" + InboxRows.COLUMNS + ") VALUES (" + InboxRows.PLACEHOLDERS
                + ") ON DUPLICATE KEY UPDATE id = id";
        this.readClaimed = "SELECT " + InboxRows.COLUMNS + ", " + InboxRows.RESULT_COLUMNS + " FROM " + messages
                + " WHERE inbox = ? AND id = ? LOCK IN SHARE MODE";
        this.storeResult = "UPDATE " + messages + " SET result_type = ?, result_type_version = ?, result = ?"
                + " WHERE inbox = ? AND id = ?";
        this.raiseHorizon = "INSERT INTO " + tables.horizonTable() + " (inbox, horizon) VALUES (?, ?)"
                + " ON DUPLICATE KEY UPDATE horizon = GREATEST(horizon, VALUES(horizon))";
        this.selectOldest = "SELECT received_at, id FROM " + messages
                + " WHERE inbox = ? AND received_at < ? AND (received_at > ? OR (received_at = ? AND id > ?))"
                + " ORDER BY received_at, id LIMIT ? FOR UPDATE";
        this.deleteIds = "DELETE FROM " + messages + " WHERE inbox = ? AND id IN (";
        this.joinedClaim = "INSERT INTO " + messages + " (" + InboxRows.COLUMNS + ") VALUES ("
                + InboxRows.PLACEHOLDERS + ")";
        this.joinedHorizon = "SELECT horizon AS t FROM " + tables.horizonTable() + " WHERE inbox = ? LOCK IN SHARE MODE";
        // Before the first handle is opened: an effect's commit or rollback through Jdbi is refused.
        this.jdbi = EffectGuard.install(jdbi);
        this.busyTimeout = settings.busyTimeout();
        this.lockWaitTimeout = Long.toString(lockWaitSeconds(busyTimeout));
        if (settings.schemaMode() == SchemaMode.CREATE) {
            // A handle of its own: creating the tables may drop its connection (see inDatabase).
            Handle handle = open("opening the database");
            boolean dropped = false;
            try {
                dropped = createSchema(handle);
            } catch (RuntimeException e) {
                closeAfterSchema(handle, dropped, e);
                throw e;
            }
            closeAfterSchema(handle, dropped, null);
        }
        try (Handle handle = open("opening the database")) {
            if (settings.schemaMode() == SchemaMode.VALIDATE) {
                validateSchema(handle);
            }
            checkAffectedRows(handle);
        } catch (JdbiException e) {
            throw MariaDbErrors.translate(e, "closing the schema connection");
        }
    }

    /**
     * Closes the handle the schema was created on; a close that fails because the connection was
     * dropped on purpose is no failure.
     */
    private static void closeAfterSchema(Handle handle, boolean dropped, RuntimeException failure) {
        try {
            handle.close();
        } catch (JdbiException e) {
            if (dropped) {
                log.debug("closing the dropped schema connection failed, as it may", e);
            } else if (failure != null) {
                failure.addSuppressed(e);
            } else {
                throw MariaDbErrors.translate(e, "closing the schema connection");
            }
        }
    }

    /**
     * The {@code innodb_lock_wait_timeout} for a busy timeout: whole seconds, rounded up so that a
     * call never waits less than asked, and at least 1, the least MySQL takes (MariaDB would read
     * 0 as "do not wait at all", which would fail even a claim that meets a lock about to go).
     */
    static long lockWaitSeconds(Duration busyTimeout) {
        long seconds = busyTimeout.getSeconds();
        if (busyTimeout.getNano() > 0) {
            seconds++;
        }
        return Math.max(1, seconds);
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
                        + " isolation level and lock wait timeout would never apply. Give the inbox a Jdbi whose"
                        + " connections come in autocommit mode with no transaction open");
            }
        } catch (RuntimeException e) {
            RuntimeException failure = e instanceof JdbiException jdbiFailure
                    ? MariaDbErrors.translate(jdbiFailure, "beginning the transaction") : e;
            discard(handle, failure);
            throw failure;
        }
        return MariaDbTransaction.begin(handle, lockWaitTimeout, this);
    }

    /** The caller's transaction on {@code callerHandle}, which must have autocommit off. */
    @Override
    public StoreTransaction<Handle> join(Handle callerHandle) {
        return MariaDbJoinedTransaction.join(callerHandle, lockWaitSeconds(busyTimeout), this);
    }

    @Override
    protected <T> T onConnection(InboxRows.Query<T> query) throws SQLException {
        return jdbi.withHandle(handle -> query.run(handle.getConnection()));
    }

    @Override
    protected InboxException translate(Exception failure, String doing) {
        return MariaDbErrors.translate(failure, doing);
    }

    /** Closes nothing: the connections belong to the user's Jdbi. */
    @Override
    public void close() {}

    private Handle open(String doing) {
        try {
            return jdbi.open();
        } catch (JdbiException e) {
            throw MariaDbErrors.translateOpening(e, doing);
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
     * Schema mode CREATE: runs the steps the tables lack, each the template filled in with the
     * inbox's prefix, in the tables' database, under a named lock so that concurrent first uses do
     * not race. Over tables at the level this release knows it runs no DDL and takes no lock; over
     * tables of a newer, incompatible version it refuses before anything.
     *
     * @return whether the handle's connection was dropped (see {@link #inDatabase})
     */
    private boolean createSchema(Handle handle) {
        try {
            String database = database(handle);
            Map<String, SchemaMigrations.Recorded> found = recorded(handle, database);
            SchemaMigrations.refuseIncompatible(found, tables());
            if (SchemaMigrations.pending(found).isEmpty()) {
                // Tables a migration tool created, or an earlier first use: no DDL, no lock.
                return false;
            }
            // DDL commits by itself in MariaDB, so a transaction cannot keep concurrent first uses
            // apart; a named lock does. The first release's first use took a lock of the database
            // alone; on the default names this one takes it too, first, so that an instance of that
            // release starting at the same moment on the same empty database does not run its
            // script beside this one's steps.
            List<String> lockKeys = tables().prefix().equals(InboxTables.DEFAULT_PREFIX)
                    ? List.of(database, database + "." + tables().prefix())
                    : List.of(database + "." + tables().prefix());
            List<String> held = new ArrayList<>();
            boolean dropped = false;
            try {
                for (String lockKey : lockKeys) {
                    Integer locked = handle.createQuery("SELECT GET_LOCK(" + SCHEMA_LOCK + ", :timeout)")
                            .bind("tables", lockKey)
                            .bind("timeout", lockWaitSeconds(busyTimeout))
                            .mapTo(Integer.class)
                            .one();
                    if (locked == null || locked != 1) {
                        throw new InboxBusyException("another connection held the inbox's schema lock for longer than"
                                + " the busy timeout while creating the schema; nothing was changed", null);
                    }
                    held.add(lockKey);
                }
                found = recorded(handle, database);
                SchemaMigrations.refuseIncompatible(found, tables());
                refuseForeignTables(handle, database);
                List<SchemaMigrations.Step> pending = SchemaMigrations.pending(found);
                if (!pending.isEmpty()) {
                    dropped = inDatabase(handle, database, () -> runSteps(handle, pending));
                    log.debug("inbox schema steps {} ran on {} in database {}", pending.stream().map(Object::toString)
                            .collect(Collectors.joining(", ")), tables().describe(), database);
                }
            } finally {
                // A dropped connection took its named locks with it.
                if (!dropped && isOpen(handle)) {
                    for (String lockKey : held) {
                        handle.createQuery("SELECT RELEASE_LOCK(" + SCHEMA_LOCK + ")").bind("tables", lockKey)
                                .mapTo(Integer.class).one();
                    }
                }
            }
            return dropped;
        } catch (JdbiException e) {
            throw MariaDbErrors.translate(e, "creating the inbox schema");
        }
    }

    /**
     * Refuses, before any DDL, tables of the inbox's names that are not the inbox's: without
     * {@code <prefix>schema}, which every step's script creates first, a table named
     * {@code <prefix>message} (or horizon, or kafka_offset) belongs to someone else, such as the
     * user's own table that the prefix happens to name. The steps would skip creating it and then
     * alter it, each statement committed by itself.
     */
    private void refuseForeignTables(Handle handle, String database) {
        List<String> existing = handle.createQuery("SELECT TABLE_NAME FROM information_schema.TABLES"
                        + " WHERE TABLE_SCHEMA = :db AND TABLE_NAME IN (<names>) ORDER BY TABLE_NAME")
                .bind("db", database)
                .bindList("names", List.of(tables().name("schema"), tables().name("message"), tables().name("horizon"),
                        tables().name("kafka_offset")))
                .mapTo(String.class)
                .list();
        if (!existing.isEmpty() && !existing.contains(tables().name("schema"))) {
            throw new InboxStorageException(InboxStorageException.Kind.OTHER, "database " + database + " has table"
                    + (existing.size() > 1 ? "s " : " ") + String.join(", ", existing) + " but no "
                    + tables().name("schema") + ", so "
                    + (existing.size() > 1 ? "they are" : "it is") + " not the inbox's; nothing was created or changed."
                    + " Choose a table prefix whose names are free (InboxTables.prefix), or rename the table", null);
        }
    }

    /**
     * Runs the steps' templates, each statement waiting for a table's metadata lock at most the
     * busy timeout. An ALTER TABLE waits for every open transaction that touched the table, under
     * the session's {@code lock_wait_timeout}, a day by default; and while it waits, every new
     * statement on the table queues behind it. A long transaction of a running instance would so
     * hang the starting one and stall the others; with the busy timeout the first use fails as
     * busy instead, with the step's DDL not run, and may be retried. The session's own value is
     * put back afterwards, so a pooled connection goes back as it came. A step that fails part way
     * (MariaDB commits each DDL statement by itself) leaves its level unrecorded, and the next
     * first use runs it again: every statement of a step may run twice.
     */
    private void runSteps(Handle handle, List<SchemaMigrations.Step> pending) {
        handle.execute("SET @inbox_schema_lock_wait_timeout = @@SESSION.lock_wait_timeout,"
                + " SESSION lock_wait_timeout = " + lockWaitTimeout);
        RuntimeException failure = null;
        try {
            for (SchemaMigrations.Step step : pending) {
                // One statement at a time, stopping at the first that fails. As a JDBC batch the
                // driver would go on after a failed statement (continueBatchOnError), and since
                // each DDL statement commits by itself, a step's last UPDATE would record its level
                // with the step's ALTER TABLE not done: tables no later first use would repair.
                handle.createScript(SchemaMigrations.script(MariaDbStore.class, step, tables()))
                        .executeAsSeparateStatements();
            }
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        } finally {
            try {
                handle.execute("SET SESSION lock_wait_timeout = COALESCE(@inbox_schema_lock_wait_timeout,"
                        + " @@SESSION.lock_wait_timeout), @inbox_schema_lock_wait_timeout = NULL");
            } catch (RuntimeException e) {
                if (failure == null) {
                    throw e;
                }
                failure.addSuppressed(e);
            }
        }
    }

    /**
     * Runs {@code ddl}, whose statements name their tables unqualified, with {@code database} as
     * the connection's default database, and puts the connection's own back afterwards, so that a
     * pooled connection goes back as it came. A connection that had no default database cannot be
     * given "none" back (MariaDB has no such statement), so it is aborted instead: the pool, or the
     * Jdbi, then opens a fresh one rather than hand out one whose default database changed.
     *
     * @return whether the connection was dropped
     */
    private boolean inDatabase(Handle handle, String database, Runnable ddl) {
        Connection connection = handle.getConnection();
        String own;
        try {
            own = connection.getCatalog();
            if (database.equals(own)) {
                ddl.run();
                return false;
            }
            connection.setCatalog(database);
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "choosing database " + database + " for the inbox schema");
        }
        RuntimeException failure = null;
        boolean dropped = false;
        try {
            ddl.run();
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        } finally {
            try {
                if (own == null || own.isEmpty()) {
                    log.debug("the connection that created the inbox schema had no default database; it was aborted"
                            + " rather than given back with database {}", database);
                    connection.abort(Runnable::run);
                    dropped = true;
                } else {
                    connection.setCatalog(own);
                }
            } catch (SQLException | RuntimeException e) {
                RuntimeException restore = e instanceof SQLException sql
                        ? MariaDbErrors.translate(sql, "putting the connection's database back") : (RuntimeException) e;
                if (failure == null) {
                    throw restore;
                }
                failure.addSuppressed(restore);
            }
        }
        return dropped;
    }

    /** {@return whether the handle's connection is still open} */
    private static boolean isOpen(Handle handle) {
        try {
            return !handle.getConnection().isClosed();
        } catch (SQLException e) {
            return false;
        }
    }

    /** Schema mode VALIDATE: the tables are at the level this release knows, or a newer revision of it. */
    private void validateSchema(Handle handle) {
        try {
            String database = handle.createQuery("SELECT coalesce(:schema, DATABASE(), '(none)')")
                    .bind("schema", tables().schema().orElse(null)).mapTo(String.class).one();
            String hint = tables().prefix().equals(InboxTables.DEFAULT_PREFIX) ? MIGRATION
                    : MIGRATION + ", here " + SchemaMigrations.PLACEHOLDER + "=" + tables().prefix();
            SchemaMigrations.validate(recorded(handle, database), tables(), "database " + database, hint);
        } catch (JdbiException e) {
            throw MariaDbErrors.translate(e, "checking the inbox schema");
        }
    }

    /**
     * The database the tables are in: the inbox's own, which must exist, or else the connection's
     * default one, which there must be.
     */
    private String database(Handle handle) {
        if (tables().schema().isPresent()) {
            String database = tables().schema().get();
            boolean exists = handle.createQuery("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = :db")
                    .bind("db", database).mapTo(Integer.class).one() > 0;
            if (!exists) {
                throw new InboxStorageException(InboxStorageException.Kind.OTHER, "database " + database + ", where the"
                        + " inbox's " + tables().describe() + " belong, does not exist (or this user may not see it);"
                        + " create it first: the inbox creates tables, not databases", null);
            }
            return database;
        }
        String database = handle.createQuery("SELECT DATABASE()").mapTo(String.class).findOne().orElse(null);
        if (database == null) {
            throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the connection names no"
                    + " database, so the inbox has nowhere to create its tables; put one in the JDBC URL, or name"
                    + " one with InboxTables.inSchema", null);
        }
        return database;
    }

    /**
     * What {@code <prefix>schema} in {@code database} records, or an empty map when the database has
     * no such table. Two statements: a query naming a missing table fails even where it would not
     * read it.
     */
    private Map<String, SchemaMigrations.Recorded> recorded(Handle handle, String database) {
        boolean exists = handle.createQuery("SELECT COUNT(*) FROM information_schema.TABLES"
                        + " WHERE TABLE_SCHEMA = :db AND TABLE_NAME = :table")
                .bind("db", database)
                .bind("table", tables().name("schema"))
                .mapTo(Integer.class)
                .one() > 0;
        if (!exists) {
            return Map.of();
        }
        try {
            return SchemaMigrations.read(handle.getConnection(), tables());
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "reading the inbox schema's version");
        }
    }

    /**
     * Refuses connections whose claims could not tell an inserted row from an existing one. The
     * MariaDB and MySQL drivers by default report found rows (the CLIENT_FOUND_ROWS flag, fixed when
     * the connection is made), under which the claim of an id already stored also answers 1. The
     * probe claims one row twice in a transaction it rolls back: its second claim must answer 0.
     * The probe's inbox name is empty, which no inbox can have, and its id is the connection's, so
     * that stores opening at once do not wait for (or deadlock on) each other's probes.
     */
    private void checkAffectedRows(Handle handle) {
        try {
            handle.begin();
            handle.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
            int first = probe(handle);
            int second = probe(handle);
            handle.rollback();
            if (first != 1 || second != 0) {
                throw new InboxException("the connections report found rows instead of affected rows (the claim of"
                        + " a stored id answered " + second + " instead of 0), so the inbox could not tell a new id"
                        + " from a stored one; add useAffectedRows=true to the JDBC URL (or set the data source"
                        + " property of that name)");
            }
        } catch (RuntimeException e) {
            RuntimeException failure = e instanceof JdbiException jdbiFailure
                    ? MariaDbErrors.translate(jdbiFailure, "checking how the connection counts rows") : e;
            try {
                if (handle.isInTransaction()) {
                    handle.rollback();
                }
            } catch (RuntimeException rollbackFailure) {
                failure.addSuppressed(rollbackFailure);
            }
            if (failure instanceof InboxStorageException storage
                    && storage.kind() == InboxStorageException.Kind.READ_ONLY) {
                // Nothing can be claimed on a read-only connection anyway, and each apply says so;
                // find and the retention status still work.
                log.debug("inbox connection is read-only; the affected-rows check is skipped", e);
                return;
            }
            throw failure;
        }
    }

    private int probe(Handle handle) {
        return handle.execute("INSERT INTO " + tables().messageTable() + " (" + InboxRows.COLUMNS + ")"
                + " VALUES ('', CONCAT('probe-', CONNECTION_ID()), 0, '', 0, '', NULL, 0) ON DUPLICATE KEY UPDATE id = id");
    }

    /**
     * Reads the row a claim on {@code connection} met and holds the lock of, so it waits for
     * nothing.
     */
    InboxRecord readClaimed(Connection connection, String inbox, String id) throws SQLException {
        try (PreparedStatement read = connection.prepareStatement(readClaimed)) {
            read.setString(1, inbox);
            read.setString(2, id);
            try (ResultSet row = read.executeQuery()) {
                if (row.next()) {
                    return InboxRows.read(row, TIME);
                }
            }
        }
        throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the claim of id '" + id
                + "' met a row that then could not be read; is something deleting inbox rows?", null);
    }

    /**
     * Refuses, as {@link StoredResultException.Kind#TOO_LARGE}, a result whose update would not fit
     * the server's {@code max_allowed_packet}, before it is sent. Sent, such a statement makes the
     * server drop the connection: the whole transaction is lost, so under group commit every call
     * of the group fails, and in a joined call the caller's transaction goes with it, where a result
     * too large must fail its own call alone and roll back only its savepoint.
     *
     * <p>The size is an upper bound of what the driver sends as text: each byte the driver escapes
     * ({@code '}, {@code "}, {@code \}, NUL) counted twice, every character of the strings as four
     * bytes escaped. The limit is read on the first result that could come near the smallest packet
     * a server allows, and read again on the call's own connection before a result is refused, so a
     * raised limit is honoured.
     */
    void checkResultFits(Connection connection, String inbox, String id, EncodedResult result) throws SQLException {
        if (result.bytes() == null) {
            return;
        }
        long size = storeResult.length() + 64L + 8L * (inbox.length() + id.length() + result.type().length());
        for (byte b : result.bytes()) {
            size += b == '\'' || b == '"' || b == '\\' || b == 0 ? 2 : 1;
        }
        if (size < SMALLEST_MAX_ALLOWED_PACKET) {
            return;
        }
        long known = maxAllowedPacket;
        if (known != 0 && size < known) {
            return;
        }
        long current = readMaxAllowedPacket(connection);
        maxAllowedPacket = current;
        if (size >= current) {
            throw new StoredResultException(StoredResultException.Kind.TOO_LARGE, "inbox '" + inbox + "' id '" + id
                    + "': the result (" + result.type() + " v" + result.version() + ") of " + result.bytes().length
                    + " bytes makes an update of up to " + size + " bytes, which the MariaDB server's max_allowed_packet "
                    + current + " does not take; nothing was recorded. Raise max_allowed_packet or lower"
                    + " maxResultBytes", null);
        }
    }

    private static long readMaxAllowedPacket(Connection connection) throws SQLException {
        try (PreparedStatement read = connection.prepareStatement("SELECT @@SESSION.max_allowed_packet");
                ResultSet row = read.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }
}
