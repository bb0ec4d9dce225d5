package dev.idempotent.inbox.spring;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import dev.idempotent.inbox.postgres.PostgresInbox;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

/**
 * The store for a data source, chosen from the database product its connections report. Each
 * store's classes are named in a method of its own, so that a store whose JDBC driver the
 * application does not have is never loaded.
 */
final class InboxStores {

    private InboxStores() {
    }

    /** The databases the inbox has a store for. */
    enum Store {
        SQLITE(SchemaMode.CREATE),
        POSTGRESQL(SchemaMode.VALIDATE),
        MARIADB(SchemaMode.VALIDATE);

        final SchemaMode defaultSchemaMode;

        Store(SchemaMode defaultSchemaMode) {
            this.defaultSchemaMode = defaultSchemaMode;
        }
    }

    static Store of(DataSource dataSource) {
        String product;
        try {
            product = JdbcUtils.extractDatabaseMetaData(dataSource, DatabaseMetaData::getDatabaseProductName);
        } catch (MetaDataAccessException e) {
            throw new InboxException("the inbox could not learn which database the DataSource reaches: " + e.getMessage(), e);
        }
        DatabaseDriver driver = DatabaseDriver.fromProductName(product);
        return switch (driver) {
            case SQLITE -> Store.SQLITE;
            case POSTGRESQL -> Store.POSTGRESQL;
            case MARIADB -> Store.MARIADB;
            default -> throw new InboxException("the inbox has no store for the DataSource's database '" + product
                    + "'; it works on SQLite, PostgreSQL and MariaDB");
        };
    }

    /**
     * The Jdbi of an inbox's own transactions over the application's data source. Its connections
     * are switched to autocommit when the pool hands them out with autocommit off (a common setting
     * beside Hibernate): the inbox opens its transactions itself and refuses a connection that looks
     * like one already open. A connection just taken from the pool has no transaction open, so the
     * switch commits nothing; the pool restores its own setting when the connection is returned.
     * Over a {@code TransactionAwareDataSourceProxy} it takes its target's connections, never a
     * Spring transaction's.
     */
    static Jdbi jdbi(DataSource dataSource) {
        DataSource own = SpringInbox.transactionKey(dataSource);
        return Jdbi.create(() -> {
            Connection connection = own.getConnection();
            try {
                if (!connection.getAutoCommit()) {
                    connection.setAutoCommit(true);
                }
                return connection;
            } catch (SQLException | RuntimeException e) {
                try {
                    connection.close();
                } catch (SQLException closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            }
        });
    }

    /**
     * Refuses, by the property's name, table settings the store cannot honour, before the inbox is
     * built (whose own refusal could not name the property).
     *
     * @param store the data source's store
     * @param property the tables' property, such as {@code inbox.tables}
     * @param tables the tables' settings, or {@code null}
     * @throws IllegalArgumentException naming {@code property.schema} for a schema on SQLite
     */
    static void checkTables(Store store, String property, InboxProperties.Tables tables) {
        if (store == Store.SQLITE && tables != null && tables.schema() != null) {
            throw new IllegalArgumentException(property + ".schema: SQLite has no schemas, so the inbox's tables cannot"
                    + " be put in schema '" + tables.schema() + "'; leave it unset (" + property + ".prefix still applies)");
        }
    }

    static InboxBuilder<? extends JdbiInbox> builder(Store store, Jdbi jdbi) {
        return switch (store) {
            case SQLITE -> sqlite(jdbi);
            case POSTGRESQL -> postgres(jdbi);
            case MARIADB -> mariaDb(jdbi);
        };
    }

    private static InboxBuilder<? extends JdbiInbox> sqlite(Jdbi jdbi) {
        return SqliteInbox.builder(jdbi);
    }

    private static InboxBuilder<? extends JdbiInbox> postgres(Jdbi jdbi) {
        return PostgresInbox.builder(jdbi);
    }

    private static InboxBuilder<? extends JdbiInbox> mariaDb(Jdbi jdbi) {
        return MariaDbInbox.builder(jdbi);
    }
}
