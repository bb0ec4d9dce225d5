package dev.idempotent.inbox.kafka;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import dev.idempotent.inbox.postgres.PostgresInbox;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.util.Locale;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * A database of the test's own on one of the three servers the inbox supports: a new SQLite file,
 * a new PostgreSQL schema or a new MariaDB database, removed with everything in it on close. The
 * servers are those of the adapters' own tests (PostgreSQL 127.0.0.1:5432 database {@code test}
 * user {@code postgres}; MariaDB 127.0.0.1:3306 user {@code root}), unless {@code INBOX_PG_*} or
 * {@code INBOX_MARIADB_*} say otherwise.
 *
 * <p>Its inboxes keep their tables under prefix {@value #PREFIX} ({@link #tables()}): on PostgreSQL
 * in a schema of their own and on MariaDB in a database of their own, which no connection names as
 * its default, so every statement of the consumer must name the inbox's table of offsets as the
 * inbox does. {@link #withDefaultNames} keeps the default names in the test's own database.
 */
final class TestDatabase implements AutoCloseable {

    enum Kind { SQLITE, POSTGRES, MARIADB }

    /** The prefix of the tables of a database on renamed tables. */
    static final String PREFIX = "kt_";

    private static final String MARIADB_SERVER = environment("INBOX_MARIADB_HOST", "127.0.0.1") + ":"
            + environment("INBOX_MARIADB_PORT", "3306");
    private static final String MARIADB_USER = environment("INBOX_MARIADB_USER", "root");
    private static final String MARIADB_PASSWORD = environment("INBOX_MARIADB_PASSWORD", "");

    private final Kind kind;
    private final String name;
    private final InboxTables tables;
    private final Jdbi jdbi;
    private final Runnable drop;

    private TestDatabase(Kind kind, String name, InboxTables tables, Jdbi jdbi, Runnable drop) {
        this.kind = kind;
        this.name = name;
        this.tables = tables;
        this.jdbi = jdbi;
        this.drop = drop;
    }

    /** A database whose inboxes keep their tables under prefix {@value #PREFIX}, elsewhere on a server. */
    static TestDatabase create(Kind kind, Path dir) {
        return create(kind, dir, PREFIX);
    }

    /** A database whose inboxes keep the default names, in the test's own database. */
    static TestDatabase withDefaultNames(Kind kind, Path dir) {
        return create(kind, dir, null);
    }

    /**
     * A database whose inboxes keep their tables under {@code prefix} (on a server, in a schema or
     * database of their own), or under the default names in the test's database if it is null.
     */
    static TestDatabase create(Kind kind, Path dir, String prefix) {
        String name = "kafka_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String apart = name + "_t";
        switch (kind) {
            case SQLITE -> {
                InboxTables tables = prefix == null ? InboxTables.defaults() : InboxTables.prefix(prefix);
                return new TestDatabase(kind, name, tables, SqliteInbox.jdbi(dir.resolve(name + ".db")), () -> {});
            }
            case POSTGRES -> {
                InboxTables tables = prefix == null ? InboxTables.defaults() : InboxTables.prefix(prefix).inSchema(apart);
                Jdbi admin = Jdbi.create(ConsumerProcess.postgresUrl("public"));
                admin.useHandle(h -> h.execute("CREATE SCHEMA " + name));
                tables.schema().ifPresent(schema -> admin.useHandle(h -> h.execute("CREATE SCHEMA " + schema)));
                return new TestDatabase(kind, name, tables, Jdbi.create(ConsumerProcess.postgresUrl(name)),
                        () -> admin.useHandle(h -> h.execute("DROP SCHEMA " + name
                                + tables.schema().map(schema -> ", " + schema).orElse("") + " CASCADE")));
            }
            default -> {
                InboxTables tables = prefix == null ? InboxTables.defaults() : InboxTables.prefix(prefix).inSchema(apart);
                Jdbi admin = Jdbi.create("jdbc:mariadb://" + MARIADB_SERVER + "/", MARIADB_USER, MARIADB_PASSWORD);
                // The server's default collation (case-insensitive), as most installations have it.
                admin.useHandle(h -> h.execute("CREATE DATABASE " + name.toLowerCase(Locale.ROOT)
                        + " CHARACTER SET utf8mb4"));
                tables.schema().ifPresent(schema -> admin.useHandle(h -> h.execute("CREATE DATABASE " + schema
                        + " CHARACTER SET utf8mb4")));
                return new TestDatabase(kind, name, tables, Jdbi.create("jdbc:mariadb://" + MARIADB_SERVER + "/" + name
                                + "?useAffectedRows=true", MARIADB_USER, MARIADB_PASSWORD),
                        () -> admin.useHandle(h -> {
                            h.execute("DROP DATABASE IF EXISTS " + name);
                            tables.schema().ifPresent(schema -> h.execute("DROP DATABASE IF EXISTS " + schema));
                        }));
            }
        }
    }

    /** {@return where the inboxes of {@link #inbox()} keep their tables} */
    InboxTables tables() {
        return tables;
    }

    /** {@return the inboxes' table of offsets, qualified, for the test's own reads and writes} */
    String offsets() {
        return tables.kafkaOffsetTable();
    }

    Kind kind() {
        return kind;
    }

    /** A Jdbi over this database, for the test's own tables and checks. */
    Jdbi jdbi() {
        return jdbi;
    }

    /**
     * A Jdbi over this PostgreSQL schema that connects through {@code port} on loopback (a relay in
     * front of the server).
     */
    Jdbi postgresVia(int port) {
        if (kind != Kind.POSTGRES) {
            throw new IllegalStateException("a relay is for PostgreSQL only here");
        }
        return Jdbi.create("jdbc:postgresql://127.0.0.1:" + port + "/" + environment("INBOX_PG_DATABASE", "test")
                + "?user=" + environment("INBOX_PG_USER", "postgres") + "&currentSchema=" + name
                + "&sslmode=disable&gssEncMode=disable&connectTimeout=10");
    }

    /** A builder of an inbox over this database. */
    InboxBuilder<? extends JdbiInbox> inbox() {
        return switch (kind) {
            case SQLITE -> SqliteInbox.builder(jdbi).tables(tables);
            case POSTGRES -> PostgresInbox.builder(jdbi).tables(tables);
            case MARIADB -> MariaDbInbox.builder(jdbi).tables(tables);
        };
    }

    @Override
    public String toString() {
        return kind + " " + name + " " + tables;
    }

    @Override
    public void close() {
        drop.run();
    }

    private static String environment(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
