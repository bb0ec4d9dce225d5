package dev.idempotent.inbox.spring;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * A schema of its own on the test server, random name, dropped on close. The server is
 * 127.0.0.1:5432, database {@code test}, user {@code postgres} (trust), or what
 * {@code INBOX_PG_HOST}, {@code INBOX_PG_PORT}, {@code INBOX_PG_DATABASE} and {@code INBOX_PG_USER}
 * say, as for the other modules' tests.
 */
final class PostgresSchema implements AutoCloseable {

    static final String SERVER = "jdbc:postgresql://" + environment("INBOX_PG_HOST", "127.0.0.1") + ":"
            + environment("INBOX_PG_PORT", "5432") + "/" + environment("INBOX_PG_DATABASE", "test");
    static final String USER = environment("INBOX_PG_USER", "postgres");

    static String environment(String name, String otherwise) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? otherwise : value;
    }

    final String name = "inbox_boot_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    PostgresSchema(String... setup) {
        execute("CREATE SCHEMA " + name);
        for (String statement : setup) {
            execute("SET search_path TO " + name + "; " + statement);
        }
    }

    /** {@return a JDBC URL whose connections work in this schema} */
    String url() {
        return SERVER + "?currentSchema=" + name;
    }

    void execute(String sql) {
        try (Connection connection = DriverManager.getConnection(SERVER, USER, "");
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        execute("DROP SCHEMA IF EXISTS " + name + " CASCADE");
    }
}
