package dev.idempotent.inbox.examples;

import java.util.Locale;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * A database of its own on the MariaDB test server, so that test runs never see each other's rows.
 * Dropped with everything in it on {@link #close()}. The server is 127.0.0.1:3306, user
 * {@code root} with an empty password, unless {@code INBOX_MARIADB_HOST}, {@code INBOX_MARIADB_PORT},
 * {@code INBOX_MARIADB_USER} or {@code INBOX_MARIADB_PASSWORD} say otherwise.
 */
final class MariaDbDatabase implements SharedDatabase {

    /** Host and port, as a warehouse on this server describes where it is (before its database). */
    static final String SERVER = environment("INBOX_MARIADB_HOST", "127.0.0.1") + ":"
            + environment("INBOX_MARIADB_PORT", "3306");
    static final String USER = environment("INBOX_MARIADB_USER", "root");
    static final String PASSWORD = environment("INBOX_MARIADB_PASSWORD", "");

    private final String name;
    private final Jdbi admin;

    private MariaDbDatabase(String name) {
        this.name = name;
        this.admin = Jdbi.create("jdbc:mariadb://" + SERVER + "/", USER, PASSWORD);
    }

    private static String environment(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** Creates a new database whose name starts with {@code prefix}. */
    static MariaDbDatabase create(String prefix) {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        MariaDbDatabase database = new MariaDbDatabase((prefix + "_" + suffix).toLowerCase(Locale.ROOT));
        database.admin.useHandle(handle -> handle.execute("CREATE DATABASE " + database.name + " CHARACTER SET utf8mb4"));
        return database;
    }

    /** The {@code --db} URL of this database, with the test server's user (and password, if any). */
    @Override
    public String url() {
        return "mariadb://" + USER + (PASSWORD.isEmpty() ? "" : ":" + PASSWORD) + "@" + SERVER + "/" + name;
    }

    @Override
    public String described() {
        return "MariaDB " + SERVER + "/" + name;
    }

    @Override
    public Jdbi jdbi() {
        return Jdbi.create("jdbc:mariadb://" + SERVER + "/" + name + "?useAffectedRows=true", USER, PASSWORD);
    }

    @Override
    public void close() {
        admin.useHandle(handle -> handle.execute("DROP DATABASE IF EXISTS " + name));
    }
}
