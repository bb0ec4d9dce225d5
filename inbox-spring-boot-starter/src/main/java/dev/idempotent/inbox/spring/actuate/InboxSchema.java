package dev.idempotent.inbox.spring.actuate;

import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import org.jdbi.v3.core.JdbiException;

/** The schema level the inbox's tables record, read as the stores read it, on the inbox's own table names. */
final class InboxSchema {

    private InboxSchema() {
    }

    /**
     * {@return the inbox component's level recorded in the inbox's {@code <prefix>schema} table},
     * empty if there is no such table or it has no row for the inbox.
     *
     * @param inbox the inbox, whose settings name its tables
     * @throws SQLException if the database's metadata or the table cannot be read
     * @throws JdbiException if no connection could be had
     */
    static Optional<SchemaMigrations.Level> level(JdbiInbox inbox) throws SQLException {
        InboxTables tables = inbox.settings().tables();
        return inbox.jdbi().<Optional<SchemaMigrations.Level>, SQLException>withHandle(handle -> {
            Connection connection = handle.getConnection();
            if (!exists(connection, tables)) {
                return Optional.empty();
            }
            SchemaMigrations.Recorded recorded = SchemaMigrations.read(connection, tables).get(SchemaMigrations.INBOX);
            return recorded == null ? Optional.empty() : Optional.of(recorded.level());
        });
    }

    /**
     * Whether the {@code <prefix>schema} table is where the inbox looks for it: in the tables'
     * schema (a MariaDB database is a JDBC catalog), else the connection's own; a table of that name
     * elsewhere is not the inbox's.
     */
    private static boolean exists(Connection connection, InboxTables tables) throws SQLException {
        DatabaseMetaData metadata = connection.getMetaData();
        boolean catalogs = metadata.getDatabaseProductName().toLowerCase(java.util.Locale.ROOT).matches(".*(mariadb|mysql).*");
        String catalog = connection.getCatalog();
        String schema = connection.getSchema();
        if (tables.schema().isPresent()) {
            if (catalogs) {
                catalog = tables.schema().get();
            } else {
                schema = tables.schema().get();
            }
        }
        // '_' is a pattern's any-character: escaped, so that inbox_schema does not match inboxxschema.
        String escape = metadata.getSearchStringEscape();
        String name = tables.name("schema");
        String pattern = escape == null || escape.isEmpty() ? name : name.replace("_", escape + "_");
        try (ResultSet found = metadata.getTables(catalog, schema, pattern, null)) {
            while (found.next()) {
                if (found.getString("TABLE_NAME").equalsIgnoreCase(name)) {
                    return true;
                }
            }
        }
        return false;
    }
}
