package dev.idempotent.inbox.examples;

import java.util.Locale;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * A schema of its own in the local PostgreSQL test database (127.0.0.1:5432, database
 * {@code test}, user {@code postgres}, trust authentication), so that test runs never see each
 * other's rows. Dropped with everything in it on {@link #close()}.
 */
final class PostgresSchema implements AutoCloseable {

    private static final String SERVER = "postgresql://127.0.0.1:5432/test?user=postgres";

    private final String name;
    private final Jdbi admin;

    private PostgresSchema(String name) {
        this.name = name;
        this.admin = Jdbi.create("jdbc:" + SERVER);
    }

    /** Creates a new schema whose name starts with {@code prefix}. */
    static PostgresSchema create(String prefix) {
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        PostgresSchema schema = new PostgresSchema((prefix + "_" + suffix).toLowerCase(Locale.ROOT));
        schema.admin.useHandle(handle -> handle.execute("CREATE SCHEMA " + schema.name));
        return schema;
    }

    /** The {@code --db} URL whose connections work in this schema. */
    String url() {
        return SERVER + "&currentSchema=" + name;
    }

    /** A Jdbi for reading what the receivers wrote, in this schema. */
    Jdbi jdbi() {
        return Jdbi.create("jdbc:" + url());
    }

    @Override
    public void close() {
        admin.useHandle(handle -> handle.execute("DROP SCHEMA IF EXISTS " + name + " CASCADE"));
    }
}
