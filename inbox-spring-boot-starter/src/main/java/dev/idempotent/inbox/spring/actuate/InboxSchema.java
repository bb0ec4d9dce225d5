package dev.idempotent.inbox.spring.actuate;

import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.sql.SQLException;
import java.util.Optional;
import org.jdbi.v3.core.JdbiException;

/** The schema version the inbox's tables record, read as the stores write it. */
final class InboxSchema {

    private InboxSchema() {
    }

    /**
     * {@return the version recorded for the inbox's tables}, empty if there is none.
     *
     * @throws SQLException if the database's metadata cannot be read
     * @throws JdbiException if the database cannot be read for another reason than a missing table
     */
    static Optional<Integer> version(JdbiInbox inbox) throws SQLException {
        return inbox.jdbi().<Optional<Integer>, SQLException>withHandle(handle -> {
            java.sql.Connection connection = handle.getConnection();
            // The connection's own catalog and schema: a table of that name elsewhere is not the inbox's.
            boolean exists;
            try (java.sql.ResultSet tables = connection.getMetaData().getTables(
                    connection.getCatalog(), connection.getSchema(), "inbox_schema", null)) {
                exists = tables.next();
            }
            if (!exists) {
                return Optional.empty();
            }
            return handle.createQuery("SELECT version FROM inbox_schema WHERE component = 'inbox'")
                    .mapTo(Integer.class).findOne();
        });
    }
}
