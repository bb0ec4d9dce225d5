package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.flywaydb.core.Flyway;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The schema Flyway and Liquibase create from the jar's migrations is the one the inbox creates and
 * passes {@link SchemaMode#VALIDATE}, with the default names and with a prefix; a database of
 * today's release (steps 0.1 and 0.2) is migrated by either tool, or by CREATE, to the steps this
 * release adds. Each test in databases of its own.
 */
class MariaDbMigrationTest {

    private final List<MariaDbFixture> fixtures = new ArrayList<>();

    private MariaDbFixture fixture() {
        MariaDbFixture fixture = MariaDbFixture.defaultNames();
        fixtures.add(fixture);
        return fixture;
    }

    /** A fixture whose second database is empty, for tables a migration tool creates. */
    private MariaDbFixture renamedFixture() {
        MariaDbFixture fixture = new MariaDbFixture(false, true, false);
        fixtures.add(fixture);
        return fixture;
    }

    @AfterEach
    void dropDatabases() {
        fixtures.forEach(MariaDbFixture::close);
    }

    /**
     * The tables named {@code prefix*} in {@code database}: engines, columns, indexes, and the rows
     * of the schema table.
     */
    static List<String> describe(Jdbi admin, String database, String prefix) {
        String like = prefix.replace("_", "\\_") + "%";
        List<String> description = new ArrayList<>(admin.withHandle(handle -> handle.createQuery("""
                        SELECT CONCAT(TABLE_NAME, ' ', ENGINE, ' ', ROW_FORMAT) FROM information_schema.TABLES
                        WHERE TABLE_SCHEMA = :db AND TABLE_NAME LIKE :like ORDER BY TABLE_NAME""")
                .bind("db", database).bind("like", like).mapTo(String.class).list()));
        description.addAll(admin.withHandle(handle -> handle.createQuery("""
                        SELECT CONCAT(TABLE_NAME, '.', COLUMN_NAME, ' ', COLUMN_TYPE, ' nullable=', IS_NULLABLE,
                                      ' default=', COALESCE(COLUMN_DEFAULT, '-'),
                                      ' collation=', COALESCE(COLLATION_NAME, '-'), ' #', ORDINAL_POSITION)
                        FROM information_schema.COLUMNS
                        WHERE TABLE_SCHEMA = :db AND TABLE_NAME LIKE :like
                        ORDER BY TABLE_NAME, ORDINAL_POSITION""")
                .bind("db", database).bind("like", like).mapTo(String.class).list()));
        description.addAll(admin.withHandle(handle -> handle.createQuery("""
                        SELECT CONCAT(TABLE_NAME, ' ', INDEX_NAME, ' ', SEQ_IN_INDEX, ' ', COLUMN_NAME, ' unique=',
                                      1 - NON_UNIQUE)
                        FROM information_schema.STATISTICS
                        WHERE TABLE_SCHEMA = :db AND TABLE_NAME LIKE :like
                        ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX""")
                .bind("db", database).bind("like", like).mapTo(String.class).list()));
        if (description.stream().anyMatch(line -> line.startsWith(prefix + "schema "))) {
            description.addAll(schemaRows(admin, database + "." + prefix + "schema"));
        }
        return description;
    }

    /** The rows of a schema table, as {@code component=version.revision/min_release}. */
    static List<String> schemaRows(Jdbi jdbi, String schemaTable) {
        return jdbi.withHandle(handle -> {
            boolean revisions = columns(handle.getConnection(), schemaTable).contains("revision");
            return handle.createQuery(revisions
                            ? "SELECT CONCAT(component, '=', version, '.', revision, '/', COALESCE(min_release, '-'))"
                                    + " FROM " + schemaTable + " ORDER BY component"
                            : "SELECT CONCAT(component, '=', version) FROM " + schemaTable + " ORDER BY component")
                    .mapTo(String.class).list();
        });
    }

    private static List<String> columns(java.sql.Connection connection, String table) {
        try (var statement = connection.createStatement();
                var rows = statement.executeQuery("SELECT * FROM " + table + " LIMIT 0")) {
            List<String> names = new ArrayList<>();
            for (int i = 1; i <= rows.getMetaData().getColumnCount(); i++) {
                names.add(rows.getMetaData().getColumnLabel(i));
            }
            return names;
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private List<String> createdByTheInbox() {
        MariaDbFixture created = fixture();
        created.builder().build().close();
        return describe(created.admin(), created.database(), "inbox_");
    }

    /** Today's release's claim: a plain INSERT of the columns it knows, without the result columns. */
    private static void claimAsTodaysRelease(Jdbi jdbi, String messageTable, String id) {
        jdbi.useHandle(handle -> handle.execute("INSERT INTO " + messageTable + " (" + InboxRows.COLUMNS
                + ") VALUES ('warehouse', ?, 1, 'inbox.int64', 1, ?, NULL, 5)", id, new byte[32]));
    }

    @Test
    void everyStepsScriptWithTheDefaultNamesIsItsTemplateFilledIn() {
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            String template = InboxRows.script(MariaDbStore.class, SchemaMigrations.TEMPLATES + step.file());
            String defaultNames = InboxRows.script(MariaDbStore.class, SchemaMigrations.DEFAULT_NAMES + step.file());
            assertTrue(template.contains("${" + SchemaMigrations.PLACEHOLDER + "}"), step + " names its tables by the placeholder");
            assertEquals(statements(SchemaMigrations.fill(template, InboxTables.DEFAULT_PREFIX)), statements(defaultNames),
                    step + ": flyway/ holds the template's statements with prefix inbox_");
            assertTrue(!statements(template).replace("${" + SchemaMigrations.PLACEHOLDER + "}", "").contains("inbox_"), step + "'s template writes no name with inbox_ in it");
        }
    }

    /** A script's statements: without {@code --} comments and blank lines, whitespace normalised. */
    private static String statements(String script) {
        StringBuilder out = new StringBuilder();
        for (String line : script.split("\n")) {
            int comment = line.indexOf("--");
            String code = (comment < 0 ? line : line.substring(0, comment)).strip();
            if (!code.isEmpty()) {
                out.append(code).append(' ');
            }
        }
        return out.toString().replaceAll("\\s+", " ").strip();
    }

    @Test
    void theTemplatesAreUtf8AndNameNoOtherPlaceholder() {
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            String template = InboxRows.script(MariaDbStore.class, SchemaMigrations.TEMPLATES + step.file());
            String rest = template.replace("${" + SchemaMigrations.PLACEHOLDER + "}", "");
            assertTrue(!rest.contains("${"), step + " has no other placeholder, which Flyway would refuse unset");
            assertEquals(template, new String(template.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8));
        }
    }

    @Test
    void flywayMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() {
        MariaDbFixture migrated = fixture();
        assertEquals(4, Migrations.flyway(migrated), "0.1 to 0.4");

        List<String> schema = describe(migrated.admin(), migrated.database(), "inbox_");
        assertEquals(createdByTheInbox(), schema);
        assertTrue(schema.contains("inbox=1.2/0.1.0"), schema.toString());
        assertTrue(schema.contains("kafka_offset=1.0/0.1.0"), schema.toString());
        try (MariaDbInbox inbox = migrated.builder().schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void liquibaseMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() throws Exception {
        MariaDbFixture migrated = fixture();
        Migrations.liquibase(migrated);

        assertEquals(createdByTheInbox(), describe(migrated.admin(), migrated.database(), "inbox_"));
        try (MariaDbInbox inbox = migrated.builder().schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void validateRefusesADatabaseWithoutTheInboxsTablesAndCreatesNothing() {
        MariaDbFixture empty = fixture();

        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> empty.builder().schema(SchemaMode.VALIDATE).build());

        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, refused.kind());
        assertTrue(refused.getMessage().contains("database " + empty.database()), refused.getMessage());
        assertTrue(refused.getMessage().contains("V0_1__inbox_schema"), refused.getMessage());
        assertEquals(List.of(), describe(empty.admin(), empty.database(), "inbox_"));
    }

    /** VALIDATE over tables at 1.0 refuses, naming the two steps to run. */
    private static void assertValidateNamesTheNewSteps(MariaDbFixture today) {
        InboxStorageException behind = assertThrows(InboxStorageException.class,
                () -> today.builder().schema(SchemaMode.VALIDATE).build());
        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, behind.kind());
        assertTrue(behind.getMessage().contains("V0_3__schema_revision, V0_4__stored_results"), behind.getMessage());
        assertTrue(behind.getMessage().contains("inbox-schema-revision-1, inbox-stored-results-1"), behind.getMessage());
        assertTrue(behind.getMessage().contains("at inbox schema 1.0"), behind.getMessage());
    }

    /** On tables migrated from 1.0 to 1.2: VALIDATE works, and so does today's release's plain INSERT. */
    private static void assertMigratedFromToday(MariaDbFixture migrated) {
        assertTrue(schemaRows(migrated.jdbi(), "inbox_schema").contains("inbox=1.2/0.1.0"));
        try (MariaDbInbox inbox = migrated.builder().name("warehouse").schema(SchemaMode.VALIDATE).build()) {
            Optional<InboxRecord> before = inbox.find("from-today");
            assertTrue(before.isPresent(), "the row today's release claimed is kept");
            assertEquals(Optional.empty(), before.get().result(), "and has no result");
            claimAsTodaysRelease(migrated.jdbi(), "inbox_message", "today-after");
            assertEquals(Optional.empty(), inbox.find("today-after").orElseThrow().result());
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void flywayMigratesTodaysDatabaseToTheNewStepsAndValidates() {
        MariaDbFixture today = fixture();
        assertEquals(2, Migrations.flywayDefaultNames(today.database()).target("0.2").load().migrate()
                .migrationsExecuted, "today's release: 0.1 and 0.2");
        claimAsTodaysRelease(today.jdbi(), "inbox_message", "from-today");
        assertValidateNamesTheNewSteps(today);

        Flyway flyway = Migrations.flywayDefaultNames(today.database()).load();
        assertEquals(2, flyway.migrate().migrationsExecuted, "0.3 and 0.4");
        assertTrue(flyway.validateWithResult().validationSuccessful, "flyway validate");

        assertMigratedFromToday(today);
        assertEquals(createdByTheInbox(), describe(today.admin(), today.database(), "inbox_"));
    }

    @Test
    void liquibaseMigratesTodaysDatabaseToTheNewStepsAndValidates() throws Exception {
        MariaDbFixture today = fixture();
        Migrations.liquibase(today.database(), Migrations.LIQUIBASE_CHANGELOG, Map.of(), 2);
        assertEquals(List.of("inbox-kafka-offset-1", "inbox-schema-1"), changeSets(today, "DATABASECHANGELOG"));
        claimAsTodaysRelease(today.jdbi(), "inbox_message", "from-today");
        assertValidateNamesTheNewSteps(today);

        Migrations.liquibase(today);
        assertEquals(List.of("inbox-kafka-offset-1", "inbox-schema-1", "inbox-schema-revision-1",
                "inbox-stored-results-1"), changeSets(today, "DATABASECHANGELOG"));
        Migrations.liquibaseValidate(today.database(), Migrations.LIQUIBASE_CHANGELOG);

        assertMigratedFromToday(today);
        assertEquals(createdByTheInbox(), describe(today.admin(), today.database(), "inbox_"));
    }

    private static List<String> changeSets(MariaDbFixture fixture, String table) {
        return fixture.jdbi().withHandle(handle -> handle.createQuery("SELECT ID FROM " + table + " ORDER BY ID")
                .mapTo(String.class).list());
    }

    @Test
    void createUpgradesTodaysTablesAndRecordsIt() {
        MariaDbFixture today = fixture();
        Migrations.flywayDefaultNames(today.database()).target("0.2").load().migrate();
        claimAsTodaysRelease(today.jdbi(), "inbox_message", "from-today");

        try (MariaDbInbox inbox = today.builder().name("warehouse").build()) {
            assertTrue(inbox.find("from-today").isPresent());
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }

        assertTrue(schemaRows(today.jdbi(), "inbox_schema").contains("inbox=1.2/0.1.0"));
        assertEquals(createdByTheInbox(), describe(today.admin(), today.database(), "inbox_"));
        Flyway flyway = Migrations.flywayDefaultNames(today.database()).load();
        assertEquals(2, flyway.info().pending().length,
                "CREATE records its steps in the inbox's schema table, not in Flyway's history");
        // So Flyway runs them again later, over the tables CREATE upgraded: the steps allow it.
        assertEquals(2, flyway.migrate().migrationsExecuted);
        assertTrue(flyway.validateWithResult().validationSuccessful);
        assertEquals(createdByTheInbox(), describe(today.admin(), today.database(), "inbox_"));
    }

    @Test
    void prefixedFlywayLocationCreatesThePrefixedTablesAndTwoPrefixesShareADatabase() {
        MariaDbFixture fixture = renamedFixture();
        String database = fixture.tablesDatabase();
        assertEquals(4, Migrations.flywayPrefixed(database, "orders_").load().migrate().migrationsExecuted);
        // Flyway refuses a database that holds tables but not its history table, unless it starts
        // the history at a baseline; version 0 is below every step.
        assertEquals(4, Migrations.flywayPrefixed(database, "billing_").baselineOnMigrate(true).baselineVersion("0")
                .load().migrate().migrationsExecuted);
        assertTrue(Migrations.flywayPrefixed(database, "orders_").load().validateWithResult().validationSuccessful);
        assertTrue(Migrations.flywayPrefixed(database, "billing_").load().validateWithResult().validationSuccessful);

        List<String> orders = describe(fixture.admin(), database, "orders_");
        List<String> billing = describe(fixture.admin(), database, "billing_");
        assertEquals(createdByTheInbox(), orders.stream().filter(line -> !line.startsWith("orders_flyway_history"))
                .map(line -> line.replace("orders_", "inbox_")).toList());
        assertEquals(orders.stream().map(line -> line.replace("orders_", "billing_")).toList(), billing);

        for (String prefix : List.of("orders_", "billing_")) {
            try (MariaDbInbox inbox = MariaDbInbox.builder(fixture.jdbi()).schema(SchemaMode.VALIDATE)
                    .tables(InboxTables.prefix(prefix).inSchema(database)).build()) {
                assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            }
        }
        assertEquals(1L, count(fixture, database + ".orders_message"));
        assertEquals(1L, count(fixture, database + ".billing_message"));
    }

    @Test
    void prefixedLiquibaseChangelogCreatesThePrefixedTablesFromTheParameter() throws Exception {
        MariaDbFixture fixture = renamedFixture();
        String database = fixture.tablesDatabase();
        Migrations.liquibase(database, Migrations.LIQUIBASE_PREFIXED_CHANGELOG, Map.of("inbox_table_prefix", "orders_"),
                null);

        List<String> orders = describe(fixture.admin(), database, "orders_");
        assertEquals(createdByTheInbox(), orders.stream().map(line -> line.replace("orders_", "inbox_")).toList());
        assertEquals(List.of(), describe(fixture.admin(), database, "inbox_"), "the parameter, not the default");
        try (MariaDbInbox inbox = MariaDbInbox.builder(fixture.jdbi()).schema(SchemaMode.VALIDATE)
                .tables(InboxTables.prefix("orders_").inSchema(database)).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void prefixedLiquibaseChangelogWithoutTheParameterCreatesTheDefaultNames() throws Exception {
        MariaDbFixture fixture = renamedFixture();
        String database = fixture.tablesDatabase();
        Migrations.liquibase(database, Migrations.LIQUIBASE_PREFIXED_CHANGELOG, Map.of(), null);

        assertEquals(createdByTheInbox(), describe(fixture.admin(), database, "inbox_"));
    }

    private static long count(MariaDbFixture fixture, String table) {
        return fixture.admin().withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM " + table)
                .mapTo(Long.class).one());
    }
}
