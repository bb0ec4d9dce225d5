package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.ConnectionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Tables of the inbox's choosing on MariaDB: a prefix and a database of their own, side by side with
 * another inbox's, names refused before anything is created, the schema version check both ways,
 * and CREATE in another database than the connection's without changing the connection.
 */
class MariaDbTablesTest {

    private final MariaDbFixture fixture = new MariaDbFixture(false, true, false);
    private final List<MariaDbInbox> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(MariaDbInbox::close);
        fixture.close();
    }

    private InboxTables tables(String prefix) {
        return InboxTables.prefix(prefix).inSchema(fixture.tablesDatabase());
    }

    private MariaDbInbox open(InboxTables tables, SchemaMode mode) {
        MariaDbInbox inbox = MariaDbInbox.builder(fixture.jdbi()).name("warehouse").tables(tables).schema(mode).build();
        opened.add(inbox);
        return inbox;
    }

    private long count(String sql) {
        return fixture.admin().withHandle(handle -> handle.createQuery(sql).mapTo(Long.class).one());
    }

    private List<String> tableNames() {
        return fixture.admin().withHandle(handle -> handle.createQuery("SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME)"
                        + " FROM information_schema.TABLES WHERE TABLE_SCHEMA IN (:db, :tables) ORDER BY 1")
                .bind("db", fixture.database()).bind("tables", fixture.tablesDatabase()).mapTo(String.class).list());
    }

    @Test
    void twoInboxesOnDifferentPrefixesInOneDatabaseKeepTheirOwnRecordsHorizonsAndSchemaRows() {
        MariaDbInbox alpha = open(tables("alpha_"), SchemaMode.CREATE);
        MariaDbInbox beta = open(tables("beta_"), SchemaMode.CREATE);
        String db = fixture.tablesDatabase();

        assertInstanceOf(Outcome.Applied.class, alpha.apply("snack-7", Content.of(7), tx -> 1));
        assertInstanceOf(Outcome.Applied.class, beta.apply("snack-7", Content.of(8), tx -> 1),
                "the same id with other content is new to the other inbox, not a conflict");
        assertInstanceOf(Outcome.Duplicate.class, alpha.apply("snack-7", Content.of(7), tx -> 1));
        assertInstanceOf(Outcome.Conflict.class, beta.apply("snack-7", Content.of(7), tx -> 1));
        assertEquals(1, count("SELECT COUNT(*) FROM " + db + ".alpha_message"));
        assertEquals(1, count("SELECT COUNT(*) FROM " + db + ".beta_message"));

        // Rows received long ago in both; only alpha purges.
        for (String prefix : List.of("alpha_", "beta_")) {
            fixture.admin().useHandle(handle -> handle.execute("INSERT INTO " + db + "." + prefix + "message ("
                    + InboxRows.COLUMNS + ") VALUES ('warehouse', 'old', 1, 'inbox.int64', 1, ?, NULL, 1000)",
                    new byte[32]));
        }
        MariaDbInbox purging = open(tables("alpha_"), SchemaMode.VALIDATE);
        try (MariaDbInbox retaining = MariaDbInbox.builder(fixture.jdbi()).name("warehouse").tables(tables("alpha_"))
                .retention(Duration.ofDays(1)).build()) {
            assertEquals(1, retaining.retention().purge().rowsPurged());
        }
        assertTrue(purging.find("old").isEmpty());
        assertTrue(beta.find("old").isPresent(), "beta's row is beta's");
        assertEquals(1, count("SELECT COUNT(*) FROM " + db + ".alpha_horizon"));
        assertEquals(0, count("SELECT COUNT(*) FROM " + db + ".beta_horizon"));

        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"),
                MariaDbMigrationTest.schemaRows(fixture.admin(), db + ".alpha_schema"));
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"),
                MariaDbMigrationTest.schemaRows(fixture.admin(), db + ".beta_schema"));
        fixture.admin().useHandle(handle -> handle.execute("UPDATE " + db + ".beta_schema SET revision = 3"
                + " WHERE component = 'inbox'"));
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"),
                MariaDbMigrationTest.schemaRows(fixture.admin(), db + ".alpha_schema"), "each its own version");
        assertTrue(tableNames().stream().noneMatch(name -> name.startsWith(fixture.database() + ".")),
                "nothing in the connection's own database: " + tableNames());
    }

    @Test
    void namesThatAreNotPlainIdentifiersAreRefusedByNameWithNothingCreated() {
        for (String bad : List.of("orders'", "orders;drop", "my orders_", "Orders_", "1orders_", "x".repeat(33))) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> MariaDbInbox.builder(fixture.jdbi()).tables(InboxTables.prefix(bad)).build());
            assertTrue(refused.getMessage().contains(bad), refused.getMessage());
        }
        for (String bad : List.of("shop'", "shop;drop", "my shop")) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> MariaDbInbox.builder(fixture.jdbi()).tables(InboxTables.prefix("orders_").inSchema(bad)).build());
            assertTrue(refused.getMessage().contains(bad), refused.getMessage());
        }
        assertEquals(List.of(), tableNames());
    }

    @Test
    void aDatabaseThatDoesNotExistIsRefusedWithNothingCreated() {
        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> MariaDbInbox
                .builder(fixture.jdbi()).tables(InboxTables.prefix("orders_").inSchema("no_such_database_here")).build());

        assertTrue(refused.getMessage().contains("no_such_database_here"), refused.getMessage());
        assertEquals(List.of(), tableNames());
    }

    @Test
    void aNewerRevisionOfTheKnownVersionIsAcceptedByCreateAndValidate() {
        open(tables("orders_"), SchemaMode.CREATE).close();
        fixture.admin().useHandle(handle -> handle.execute("UPDATE " + fixture.tablesDatabase()
                + ".orders_schema SET revision = 3, min_release = '0.2.0' WHERE component = 'inbox'"));

        for (SchemaMode mode : List.of(SchemaMode.CREATE, SchemaMode.VALIDATE)) {
            MariaDbInbox inbox = open(tables("orders_"), mode);
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-" + mode, Content.of(7), tx -> 1));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-" + mode, Content.of(7), tx -> 1));
        }
        assertEquals(List.of("inbox=1.3/0.2.0", "kafka_offset=1.0/0.1.0"), MariaDbMigrationTest.schemaRows(
                fixture.admin(), fixture.tablesDatabase() + ".orders_schema"), "CREATE changed nothing");
    }

    @Test
    void aNewerVersionIsRefusedNamingTheReleaseItNeeds() {
        open(tables("orders_"), SchemaMode.CREATE).close();
        fixture.admin().useHandle(handle -> handle.execute("UPDATE " + fixture.tablesDatabase()
                + ".orders_schema SET version = 2, revision = 0, min_release = '9.9.0' WHERE component = 'inbox'"));

        for (SchemaMode mode : List.of(SchemaMode.CREATE, SchemaMode.VALIDATE)) {
            InboxStorageException refused = assertThrows(InboxStorageException.class,
                    () -> open(tables("orders_"), mode));
            assertEquals(InboxStorageException.Kind.NEWER_SCHEMA, refused.kind(), mode.toString());
            assertTrue(refused.getMessage().contains("9.9.0"), refused.getMessage());
        }
        assertEquals(List.of("inbox=2.0/9.9.0", "kafka_offset=1.0/0.1.0"), MariaDbMigrationTest.schemaRows(
                fixture.admin(), fixture.tablesDatabase() + ".orders_schema"));
    }

    /** A Jdbi whose every handle is the one connection, kept open between handles, as a pool keeps one. */
    private static Jdbi onOneConnection(Connection connection) {
        return Jdbi.create(new ConnectionFactory() {
            @Override
            public Connection openConnection() {
                return connection;
            }

            @Override
            public void closeConnection(Connection toClose) {
                // Kept open for the next handle.
            }
        });
    }

    @Test
    void createInAnotherDatabaseGivesTheConnectionBackOnItsOwnDatabase() throws SQLException {
        try (Connection connection = DriverManager.getConnection(fixture.url(""), MariaDbFixture.USER,
                MariaDbFixture.PASSWORD)) {
            MariaDbInbox inbox = MariaDbInbox.builder(onOneConnection(connection)).name("warehouse")
                    .tables(tables("orders_")).build();
            opened.add(inbox);

            assertEquals(fixture.database(), onOneConnection(connection).withHandle(handle -> handle
                    .createQuery("SELECT DATABASE()").mapTo(String.class).one()));
            assertEquals(fixture.database(), connection.getCatalog());
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
        assertEquals(1, count("SELECT COUNT(*) FROM " + fixture.tablesDatabase() + ".orders_message"));
        assertTrue(tableNames().stream().noneMatch(name -> name.startsWith(fixture.database() + ".")), tableNames().toString());
    }

    @Test
    void createOnAConnectionWithoutADatabaseCreatesTheTablesAndDropsThatConnection() throws SQLException {
        String url = "jdbc:mariadb://" + MariaDbFixture.HOST + ":" + MariaDbFixture.PORT + "/?useAffectedRows=true";
        List<Connection> handedOut = new ArrayList<>();
        Jdbi noDatabase = Jdbi.create(() -> {
            Connection connection = DriverManager.getConnection(url, MariaDbFixture.USER, MariaDbFixture.PASSWORD);
            handedOut.add(connection);
            return connection;
        });
        MariaDbInbox inbox = MariaDbInbox.builder(noDatabase).name("warehouse").tables(tables("orders_")).build();
        opened.add(inbox);

        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        assertTrue(handedOut.get(0).isClosed(), "the connection whose database changed is not kept");
        assertEquals(1, count("SELECT COUNT(*) FROM " + fixture.tablesDatabase() + ".orders_message"));
        // A second build finds the tables at the known level: no DDL, so nothing to restore.
        MariaDbInbox again = MariaDbInbox.builder(noDatabase).name("warehouse").tables(tables("orders_")).build();
        opened.add(again);
        assertInstanceOf(Outcome.Duplicate.class, again.apply("snack-7", Content.of(7), tx -> 1));
    }

    @Test
    void createOverTablesAtTheKnownLevelNeedsNoPrivilegeToChangeTables() {
        open(tables("orders_"), SchemaMode.CREATE).close();
        String user = "inbox_dml_" + Long.toHexString(System.nanoTime());
        String db = fixture.tablesDatabase();
        fixture.admin().useHandle(handle -> {
            handle.execute("CREATE USER " + user + "@'%' IDENTIFIED BY 'dml'");
            // The connection's own database, for the business tables; nothing on the inbox's database.
            handle.execute("GRANT SELECT ON " + fixture.database() + ".* TO " + user + "@'%'");
            handle.execute("GRANT SELECT ON " + db + ".orders_schema TO " + user + "@'%'");
            handle.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON " + db + ".orders_message TO " + user + "@'%'");
            handle.execute("GRANT SELECT, INSERT, UPDATE ON " + db + ".orders_horizon TO " + user + "@'%'");
        });
        try {
            Jdbi dml = Jdbi.create(fixture.url(""), user, "dml");
            try (MariaDbInbox inbox = MariaDbInbox.builder(dml).name("warehouse").tables(tables("orders_")).build()) {
                assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
                assertEquals(1, inbox.find("snack-7").stream().count());
            }
        } finally {
            fixture.admin().useHandle(handle -> handle.execute("DROP USER " + user + "@'%'"));
        }
    }
}
