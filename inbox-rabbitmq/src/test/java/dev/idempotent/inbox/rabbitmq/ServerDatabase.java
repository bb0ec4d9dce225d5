package dev.idempotent.inbox.rabbitmq;

import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import dev.idempotent.inbox.postgres.PostgresInbox;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL schema or a MariaDB database of this test's own on the test servers, created with a
 * random name and dropped with everything in it by {@link #close}. PostgreSQL: 127.0.0.1:5432,
 * database {@code test}, user {@code postgres}; MariaDB: 127.0.0.1:3306, user {@code root}, no
 * password; {@code INBOX_PG_HOST}/{@code INBOX_PG_PORT} and {@code INBOX_MARIADB_HOST}/{@code
 * INBOX_MARIADB_PORT} say otherwise.
 */
final class ServerDatabase implements AutoCloseable {

    enum Kind { POSTGRES, MARIADB }

    private static final SecureRandom RANDOM = new SecureRandom();

    final Kind kind;
    final String name;
    /** Connections to this schema or database only. */
    final Jdbi jdbi;
    private final Jdbi admin;

    ServerDatabase(Kind kind) {
        this.kind = kind;
        byte[] suffix = new byte[6];
        RANDOM.nextBytes(suffix);
        name = "inbox_rabbit_" + HexFormat.of().formatHex(suffix);
        if (kind == Kind.POSTGRES) {
            admin = Jdbi.create(postgres(null));
            admin.useHandle(h -> h.execute("CREATE SCHEMA " + name));
            jdbi = Jdbi.create(postgres("-c search_path=" + name));
        } else {
            admin = Jdbi.create(mariadb(""), "root", "");
            admin.useHandle(h -> h.execute("CREATE DATABASE " + name + " CHARACTER SET utf8mb4"));
            jdbi = Jdbi.create(mariadb(name) + "&useAffectedRows=true", "root", "");
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private static PGSimpleDataSource postgres(String options) {
        PGSimpleDataSource source = new PGSimpleDataSource();
        source.setServerNames(new String[] {env("INBOX_PG_HOST", "127.0.0.1")});
        source.setPortNumbers(new int[] {Integer.parseInt(env("INBOX_PG_PORT", "5432"))});
        source.setDatabaseName("test");
        source.setUser("postgres");
        source.setSslMode("disable");
        source.setConnectTimeout(10);
        source.setApplicationName("inbox-rabbitmq-tests");
        if (options != null) {
            source.setOptions(options);
        }
        return source;
    }

    private static String mariadb(String database) {
        return "jdbc:mariadb://" + env("INBOX_MARIADB_HOST", "127.0.0.1") + ":" + env("INBOX_MARIADB_PORT", "3306")
                + "/" + database + "?connectTimeout=10000";
    }

    /** Runs {@code sql} on a connection of its own, outside this schema or database. */
    void admin(String sql) {
        admin.useHandle(h -> h.execute(sql));
    }

    /**
     * An inbox named {@code warehouse} over this PostgreSQL schema whose connections, while
     * {@code refused} holds, go to a port nothing listens on: the operating system refuses them, as
     * for a server that is down.
     */
    Inbox<Handle> inbox(Duration busyTimeout, java.util.concurrent.atomic.AtomicBoolean refused) throws IOException {
        PGSimpleDataSource up = postgres("-c search_path=" + name);
        PGSimpleDataSource down = postgres("-c search_path=" + name);
        int closedPort;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        down.setPortNumbers(new int[] {closedPort});
        down.setConnectTimeout(1);
        Jdbi switching = Jdbi.create(() -> refused.get() ? down.getConnection() : up.getConnection());
        return PostgresInbox.builder(switching).name("warehouse").busyTimeout(busyTimeout).build();
    }

    /** An inbox named {@code warehouse} over this database, with {@code busyTimeout}. */
    Inbox<Handle> inbox(Duration busyTimeout) {
        return kind == Kind.POSTGRES
                ? PostgresInbox.builder(jdbi).name("warehouse").busyTimeout(busyTimeout).build()
                : MariaDbInbox.builder(jdbi).name("warehouse").busyTimeout(busyTimeout).build();
    }

    @Override
    public void close() {
        if (kind == Kind.POSTGRES) {
            admin.useHandle(h -> h.execute("DROP SCHEMA " + name + " CASCADE"));
        } else {
            admin.useHandle(h -> h.execute("DROP DATABASE " + name));
        }
    }
}
