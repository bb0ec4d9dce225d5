package dev.idempotent.inbox.examples;

import java.util.Locale;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * A schema of its own in the PostgreSQL test database, so that test runs never see each other's
 * rows. Dropped with everything in it on {@link #close()}. The server is 127.0.0.1:5432, database
 * {@code test}, user {@code postgres} with trust authentication, unless {@code INBOX_PG_HOST},
 * {@code INBOX_PG_PORT}, {@code INBOX_PG_DATABASE} or {@code INBOX_PG_USER} say otherwise.
 */
final class PostgresSchema implements SharedDatabase {

    /** Host, port and database, as a warehouse on this server describes where it is. */
    static final String ADDRESS = environment("INBOX_PG_HOST", "127.0.0.1") + ":"
            + environment("INBOX_PG_PORT", "5432") + "/" + environment("INBOX_PG_DATABASE", "test");
    private static final String SERVER =
            "postgresql://" + ADDRESS + "?user=" + environment("INBOX_PG_USER", "postgres");

    private final String name;
    private final Jdbi admin;

    private PostgresSchema(String name) {
        this.name = name;
        this.admin = Jdbi.create("jdbc:" + SERVER);
    }

    private static String environment(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** Creates a new schema whose name starts with {@code prefix}. */
    static PostgresSchema create(String prefix) {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        PostgresSchema schema = new PostgresSchema((prefix + "_" + suffix).toLowerCase(Locale.ROOT));
        schema.admin.useHandle(handle -> handle.execute("CREATE SCHEMA " + schema.name));
        return schema;
    }

    /** The {@code --db} URL whose connections work in this schema. */
    @Override
    public String url() {
        return SERVER + "&currentSchema=" + name;
    }

    @Override
    public String described() {
        return "PostgreSQL " + ADDRESS;
    }

    /** A Jdbi for reading what the receivers wrote, in this schema. */
    @Override
    public Jdbi jdbi() {
        return Jdbi.create("jdbc:" + url());
    }

    @Override
    public void close() {
        admin.useHandle(handle -> handle.execute("DROP SCHEMA IF EXISTS " + name + " CASCADE"));
    }
}
