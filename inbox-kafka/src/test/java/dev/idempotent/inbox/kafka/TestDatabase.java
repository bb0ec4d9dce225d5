package dev.idempotent.inbox.kafka;

import dev.idempotent.inbox.InboxBuilder;
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
 */
final class TestDatabase implements AutoCloseable {

    enum Kind { SQLITE, POSTGRES, MARIADB }

    private static final String MARIADB_SERVER = environment("INBOX_MARIADB_HOST", "127.0.0.1") + ":"
            + environment("INBOX_MARIADB_PORT", "3306");
    private static final String MARIADB_USER = environment("INBOX_MARIADB_USER", "root");
    private static final String MARIADB_PASSWORD = environment("INBOX_MARIADB_PASSWORD", "");

    private final Kind kind;
    private final String name;
    private final Jdbi jdbi;
    private final Runnable drop;

    private TestDatabase(Kind kind, String name, Jdbi jdbi, Runnable drop) {
        this.kind = kind;
        this.name = name;
        this.jdbi = jdbi;
        this.drop = drop;
    }

    static TestDatabase create(Kind kind, Path dir) {
        String name = "kafka_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        switch (kind) {
            case SQLITE -> {
                return new TestDatabase(kind, name, SqliteInbox.jdbi(dir.resolve(name + ".db")), () -> {});
            }
            case POSTGRES -> {
                Jdbi admin = Jdbi.create(ConsumerProcess.postgresUrl("public"));
                admin.useHandle(h -> h.execute("CREATE SCHEMA " + name));
                return new TestDatabase(kind, name, Jdbi.create(ConsumerProcess.postgresUrl(name)),
                        () -> admin.useHandle(h -> h.execute("DROP SCHEMA " + name + " CASCADE")));
            }
            default -> {
                Jdbi admin = Jdbi.create("jdbc:mariadb://" + MARIADB_SERVER + "/", MARIADB_USER, MARIADB_PASSWORD);
                // The server's default collation (case-insensitive), as most installations have it.
                admin.useHandle(h -> h.execute("CREATE DATABASE " + name.toLowerCase(Locale.ROOT)
                        + " CHARACTER SET utf8mb4"));
                return new TestDatabase(kind, name, Jdbi.create("jdbc:mariadb://" + MARIADB_SERVER + "/" + name
                                + "?useAffectedRows=true", MARIADB_USER, MARIADB_PASSWORD),
                        () -> admin.useHandle(h -> h.execute("DROP DATABASE IF EXISTS " + name)));
            }
        }
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
            case SQLITE -> SqliteInbox.builder(jdbi);
            case POSTGRES -> PostgresInbox.builder(jdbi);
            case MARIADB -> MariaDbInbox.builder(jdbi);
        };
    }

    @Override
    public String toString() {
        return kind + " " + name;
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
