package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.JdbcInboxStore;
import dev.idempotent.inbox.spi.jdbc.TimeColumn;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
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
 * serialised by InnoDB itself, on the primary key of {@code inbox_message}; calls on different
 * ids run in parallel.
 */
final class MariaDbStore extends JdbcInboxStore<Handle> {

    static final int SCHEMA_VERSION = 1;
    static final String SCHEMA_RESOURCE = InboxRows.SCHEMA_SCRIPT;

    /** Where the schema is for migration tools, for messages. */
    static final String MIGRATION = "Flyway location classpath:dev/idempotent/inbox/mariadb/flyway, or the"
            + " Liquibase changelog dev/idempotent/inbox/mariadb/liquibase/inbox-changelog.xml";

    static final Logger log = LoggerFactory.getLogger(MariaDbStore.class);

    // BIGINT epoch milliseconds: exact, and free of the session time zone in which MariaDB reads
    // and writes DATETIME values.
    static final TimeColumn TIME = TimeColumn.EPOCH_MILLIS;

    // A no-op update on conflict: unlike INSERT IGNORE, it turns no error (a truncated value, a
    // bad character) into a warning, and it takes an exclusive lock on the existing row, so a
    // claim that meets another transaction's uncommitted claim of the id waits for it to end.
    // With the affected-rows count (useAffectedRows=true) it answers 1 for an inserted row and 0
    // for one that was there; with the driver's default found-rows count both are 1, so the store
    // refuses such connections when it opens.
    static final String CLAIM = "INSERT INTO inbox_message (" + InboxRows.COLUMNS + ") VALUES ("
            + InboxRows.PLACEHOLDERS + ") ON DUPLICATE KEY UPDATE id = id";

    // A locking read, which reads the row as last committed, whatever the transaction's snapshot.
    // A plain read takes a snapshot, and even a new one can still count the transaction that
    // committed the row as running: InnoDB marks a committing transaction committed, which lets a
    // claim take the row's lock, a moment before it takes it out of the set snapshots copy.
    private static final String READ_CLAIMED = "SELECT " + InboxRows.COLUMNS
            + " FROM inbox_message WHERE inbox = ? AND id = ? LOCK IN SHARE MODE";

    // Named locks are server-wide; the database's name, hashed to keep within the 64 characters a
    // lock name may have, keeps first uses in different databases from waiting for each other.
    private static final String SCHEMA_LOCK = "CONCAT('inbox_schema_', MD5(DATABASE()))";

    private final Jdbi jdbi;
    private final Duration busyTimeout;
    private final String lockWaitTimeout;

    MariaDbStore(Jdbi jdbi, Duration busyTimeout, SchemaMode schemaMode) {
        super(TIME);
        // Before the first handle is opened: an effect's commit or rollback through Jdbi is refused.
        this.jdbi = EffectGuard.install(jdbi);
        this.busyTimeout = busyTimeout;
        this.lockWaitTimeout = Long.toString(lockWaitSeconds(busyTimeout));
        try (Handle handle = open("opening the database")) {
            switch (schemaMode) {
                case CREATE -> createSchema(handle);
                case VALIDATE -> validateSchema(handle);
                case NONE -> { }
            }
            checkAffectedRows(handle);
        } catch (JdbiException e) {
            throw MariaDbErrors.translate(e, "closing the schema connection");
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
        return MariaDbTransaction.begin(handle, lockWaitTimeout);
    }

    /** The caller's transaction on {@code callerHandle}, which must have autocommit off. */
    @Override
    public StoreTransaction<Handle> join(Handle callerHandle) {
        return MariaDbJoinedTransaction.join(callerHandle, lockWaitSeconds(busyTimeout));
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

    private void createSchema(Handle handle) {
        try {
            if (handle.createQuery("SELECT DATABASE() IS NULL").mapTo(Boolean.class).one()) {
                throw new InboxStorageException(InboxStorageException.Kind.OTHER, "the connection names no"
                        + " database, so the inbox has nowhere to create its tables; put one in the JDBC URL", null);
            }
            Integer found = readVersion(handle);
            if (found != null) {
                // A schema a migration tool created, or an earlier first use: no DDL, no lock.
                InboxRows.refuseNewerSchema(found, SCHEMA_VERSION);
                return;
            }
            // DDL commits by itself in MariaDB, so a transaction cannot keep concurrent first uses
            // apart; a named lock does.
            Integer locked = handle.createQuery("SELECT GET_LOCK(" + SCHEMA_LOCK + ", :timeout)")
                    .bind("timeout", lockWaitSeconds(busyTimeout))
                    .mapTo(Integer.class)
                    .one();
            if (locked == null || locked != 1) {
                throw new InboxBusyException("another connection held the inbox's schema lock for longer than the"
                        + " busy timeout while creating the schema; nothing was changed", null);
            }
            try {
                if (readVersion(handle) == null) {
                    handle.createScript(schemaScript()).execute();
                    handle.createScript(InboxRows.script(MariaDbStore.class, InboxRows.KAFKA_OFFSET_SCRIPT)).execute();
                }
                Integer version = readVersion(handle);
                InboxRows.refuseNewerSchema(version == null ? SCHEMA_VERSION : version, SCHEMA_VERSION);
                log.debug("inbox schema version {} is in place", version);
            } finally {
                handle.createQuery("SELECT RELEASE_LOCK(" + SCHEMA_LOCK + ")").mapTo(Integer.class).one();
            }
        } catch (JdbiException e) {
            throw MariaDbErrors.translate(e, "creating the inbox schema");
        }
    }

    private static void validateSchema(Handle handle) {
        try {
            String database = handle.createQuery("SELECT coalesce(DATABASE(), '(none)')").mapTo(String.class).one();
            InboxRows.validateSchema(readVersion(handle), SCHEMA_VERSION, table -> tableExists(handle, table),
                    "database " + database, MIGRATION);
        } catch (JdbiException e) {
            throw MariaDbErrors.translate(e, "checking the inbox schema");
        }
    }

    /** Whether {@code table} exists in the connection's database, where the inbox works. */
    private static boolean tableExists(Handle handle, String table) {
        return handle.createQuery("SELECT COUNT(*) FROM information_schema.TABLES"
                        + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = :table")
                .bind("table", table)
                .mapTo(Integer.class)
                .one() > 0;
    }

    /** The recorded schema version, or {@code null} when the database has no inbox tables yet. */
    private static Integer readVersion(Handle handle) {
        // Two statements: a query naming a missing table fails even where it would not read it.
        boolean exists = tableExists(handle, "inbox_schema");
        if (!exists) {
            return null;
        }
        return handle.createQuery("SELECT version FROM inbox_schema WHERE component = 'inbox'")
                .mapTo(Integer.class)
                .findOne()
                .orElse(null);
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

    private static int probe(Handle handle) {
        return handle.execute("INSERT INTO inbox_message (" + InboxRows.COLUMNS + ")"
                + " VALUES ('', CONCAT('probe-', CONNECTION_ID()), 0, '', 0, '', NULL, 0) ON DUPLICATE KEY UPDATE id = id");
    }

    /** The text of the schema script shipped in this jar. */
    static String schemaScript() {
        return InboxRows.script(MariaDbStore.class, SCHEMA_RESOURCE);
    }

    /**
     * Reads the row a claim on {@code connection} met and holds the lock of, so it waits for
     * nothing.
     */
    static InboxRecord readClaimed(Connection connection, String inbox, String id) throws SQLException {
        try (PreparedStatement read = connection.prepareStatement(READ_CLAIMED)) {
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
}
