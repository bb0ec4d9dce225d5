package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.slf4j.Logger;

/**
 * The inbox's tables on MariaDB when {@link MariaDbStore} is built: schema mode CREATE runs the
 * steps they lack, schema mode VALIDATE checks the level they are at.
 *
 * <p>A class apart from the store because it does what no transaction of the store does. MariaDB
 * commits each DDL statement by itself, so a transaction cannot keep concurrent first uses apart:
 * named locks do. The DDL runs in the tables' database, under the busy timeout as the session's
 * {@code lock_wait_timeout}, and the connection's own database and timeout are put back
 * afterwards (or the connection dropped, where it had no database to put back). It runs before
 * the store's first transaction and keeps nothing but the tables' names and the busy timeout.
 */
final class MariaDbSchema {

    /** Where the schema is for migration tools, for messages. */
    static final String MIGRATION = "Flyway location classpath:dev/idempotent/inbox/mariadb/flyway for the"
            + " default names, or classpath:dev/idempotent/inbox/mariadb/flyway-prefixed with placeholder"
            + " inbox_table_prefix set to the inbox's prefix; or the Liquibase changelog"
            + " dev/idempotent/inbox/mariadb/liquibase/inbox-changelog.xml, or inbox-changelog-prefixed.xml"
            + " beside it with parameter inbox_table_prefix";

    // Named locks are server-wide; the database's and the prefix's name, hashed to keep within the
    // 64 characters a lock name may have, keep first uses of other tables from waiting for each other.
    private static final String SCHEMA_LOCK = "CONCAT('inbox_schema_', MD5(:tables))";

    // The store's logger, so that what users configure for the store covers its schema as before.
    private static final Logger log = MariaDbStore.log;

    private final InboxTables tables;
    // The busy timeout as MariaDbStore.lockWaitSeconds gives it: for the schema lock and the DDL.
    private final long lockWaitSeconds;

    MariaDbSchema(InboxTables tables, long lockWaitSeconds) {
        this.tables = tables;
        this.lockWaitSeconds = lockWaitSeconds;
    }

    /**
     * Schema mode CREATE, on a handle of its own, which this closes: creating the tables may drop
     * its connection (see {@link #inDatabase}).
     *
     * @throws InboxBusyException if another connection held the schema lock for longer than the
     *     busy timeout; nothing was changed
     * @throws dev.idempotent.inbox.InboxException if the tables are of a newer, incompatible version
     *     or not the inbox's, if there is no database to create them in, or if a statement failed
     */
    void create(Handle handle) {
        boolean dropped = false;
        try {
            dropped = createSchema(handle);
        } catch (RuntimeException e) {
            closeAfterSchema(handle, dropped, e);
            throw e;
        }
        closeAfterSchema(handle, dropped, null);
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
            SchemaMigrations.refuseIncompatible(found, tables);
            if (SchemaMigrations.pending(found).isEmpty()) {
                // Tables a migration tool created, or an earlier first use: no DDL, no lock.
                return false;
            }
            // DDL commits by itself in MariaDB, so a transaction cannot keep concurrent first uses
            // apart; a named lock does. The first release's first use took a lock of the database
            // alone; on the default names this one takes it too, first, so that an instance of that
            // release starting at the same moment on the same empty database does not run its
            // script beside this one's steps.
            List<String> lockKeys = tables.prefix().equals(InboxTables.DEFAULT_PREFIX)
                    ? List.of(database, database + "." + tables.prefix())
                    : List.of(database + "." + tables.prefix());
            List<String> held = new ArrayList<>();
            boolean dropped = false;
            try {
                for (String lockKey : lockKeys) {
                    Integer locked = handle.createQuery("SELECT GET_LOCK(" + SCHEMA_LOCK + ", :timeout)")
                            .bind("tables", lockKey)
                            .bind("timeout", lockWaitSeconds)
                            .mapTo(Integer.class)
                            .one();
                    if (locked == null || locked != 1) {
                        throw new InboxBusyException("another connection held the inbox's schema lock for longer than"
                                + " the busy timeout while creating the schema; nothing was changed", null);
                    }
                    held.add(lockKey);
                }
                found = recorded(handle, database);
                SchemaMigrations.refuseIncompatible(found, tables);
                refuseForeignTables(handle, database);
                List<SchemaMigrations.Step> pending = SchemaMigrations.pending(found);
                if (!pending.isEmpty()) {
                    dropped = inDatabase(handle, database, () -> runSteps(handle, pending));
                    log.debug("inbox schema steps {} ran on {} in database {}", pending.stream().map(Object::toString)
                            .collect(Collectors.joining(", ")), tables.describe(), database);
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
                .bindList("names", List.of(tables.name("schema"), tables.name("message"), tables.name("horizon"),
                        tables.name("kafka_offset")))
                .mapTo(String.class)
                .list();
        if (!existing.isEmpty() && !existing.contains(tables.name("schema"))) {
            throw new InboxStorageException(InboxStorageException.Kind.OTHER, "database " + database + " has table"
                    + (existing.size() > 1 ? "s " : " ") + String.join(", ", existing) + " but no "
                    + tables.name("schema") + ", so "
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
                + " SESSION lock_wait_timeout = " + lockWaitSeconds);
        RuntimeException failure = null;
        try {
            for (SchemaMigrations.Step step : pending) {
                // One statement at a time, stopping at the first that fails. As a JDBC batch the
                // driver would go on after a failed statement (continueBatchOnError), and since
                // each DDL statement commits by itself, a step's last UPDATE would record its level
                // with the step's ALTER TABLE not done: tables no later first use would repair.
                handle.createScript(SchemaMigrations.script(MariaDbStore.class, step, tables))
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

    /**
     * Schema mode VALIDATE: the tables are at the level this release knows, or a newer revision of
     * it. Runs no DDL and takes no lock; the handle stays open.
     *
     * @throws InboxStorageException of kind {@code SCHEMA_MISSING}, naming the migrations to run, or
     *     of kind {@code NEWER_SCHEMA}
     */
    void validate(Handle handle) {
        try {
            String database = handle.createQuery("SELECT coalesce(:schema, DATABASE(), '(none)')")
                    .bind("schema", tables.schema().orElse(null)).mapTo(String.class).one();
            String hint = tables.prefix().equals(InboxTables.DEFAULT_PREFIX) ? MIGRATION
                    : MIGRATION + ", here " + SchemaMigrations.PLACEHOLDER + "=" + tables.prefix();
            SchemaMigrations.validate(recorded(handle, database), tables, "database " + database, hint);
        } catch (JdbiException e) {
            throw MariaDbErrors.translate(e, "checking the inbox schema");
        }
    }

    /**
     * The database the tables are in: the inbox's own, which must exist, or else the connection's
     * default one, which there must be.
     */
    private String database(Handle handle) {
        if (tables.schema().isPresent()) {
            String database = tables.schema().get();
            boolean exists = handle.createQuery("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = :db")
                    .bind("db", database).mapTo(Integer.class).one() > 0;
            if (!exists) {
                throw new InboxStorageException(InboxStorageException.Kind.OTHER, "database " + database + ", where the"
                        + " inbox's " + tables.describe() + " belong, does not exist (or this user may not see it);"
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
                .bind("table", tables.name("schema"))
                .mapTo(Integer.class)
                .one() > 0;
        if (!exists) {
            return Map.of();
        }
        try {
            return SchemaMigrations.read(handle.getConnection(), tables);
        } catch (SQLException e) {
            throw MariaDbErrors.translate(e, "reading the inbox schema's version");
        }
    }
}
