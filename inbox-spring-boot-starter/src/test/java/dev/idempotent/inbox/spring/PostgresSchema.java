package dev.idempotent.inbox.spring;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/** A schema of its own on the test server (db {@code test}), random name, dropped on close. */
final class PostgresSchema implements AutoCloseable {

    static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/test";
    static final String USER = "postgres";

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
