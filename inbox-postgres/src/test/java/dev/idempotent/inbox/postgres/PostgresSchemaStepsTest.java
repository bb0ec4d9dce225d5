package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import dev.idempotent.inbox.testkit.MutableClock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The schema steps on PostgreSQL: the templates and the default-named scripts say the same, a
 * database of the first release migrates by Flyway, by Liquibase and by schema mode CREATE, the
 * prefixed location and changelog make prefixed tables, the version check works both ways, and
 * table names are refused before anything is created when they are not plain identifiers.
 */
class PostgresSchemaStepsTest {

    private static final String STORE = "dev/idempotent/inbox/postgres/";

    private final List<PostgresFixture> fixtures = new ArrayList<>();

    private PostgresFixture fixture() {
        PostgresFixture fixture = PostgresFixture.withDefaultNames();
        fixtures.add(fixture);
        return fixture;
    }

    @AfterEach
    void dropSchemas() {
        fixtures.forEach(PostgresFixture::close);
    }

    private static String resource(String path) throws IOException {
        try (InputStream in = PostgresStore.class.getClassLoader().getResourceAsStream(path)) {
            assertNotNull(in, path + " is in the jar");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** A script's statements: {@code --} comments and blank lines taken out, whitespace made single spaces. */
    private static String statements(String script) {
        StringBuilder text = new StringBuilder();
        for (String line : script.split("\n")) {
            int comment = line.indexOf("--");
            String code = (comment < 0 ? line : line.substring(0, comment)).strip();
            if (!code.isEmpty()) {
                text.append(code).append(' ');
            }
        }
        return text.toString().replaceAll("\\s+", " ").strip();
    }

    @Test
    void everyStepHasATemplateAndTheDefaultNamedScriptIsItFilledInWithInbox() throws IOException {
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            String template = resource(STORE + SchemaMigrations.TEMPLATES + step.file());
            String shipped = resource(STORE + SchemaMigrations.DEFAULT_NAMES + step.file());

            assertTrue(template.contains("${" + SchemaMigrations.PLACEHOLDER + "}"), step + " names its tables by the placeholder");
            assertFalse(statements(shipped).contains("${"), step + ": the default-named script has no placeholder left");
            assertEquals(statements(shipped), statements(SchemaMigrations.fill(template, InboxTables.DEFAULT_PREFIX)),
                    step + ": the default-named script is the template filled in with inbox_");
        }
    }

    @Test
    void bothChangelogsRunEveryStepUnderItsChangeSetId() throws IOException {
        String defaults = resource(Migrations.LIQUIBASE_CHANGELOG);
        String prefixed = resource(Migrations.LIQUIBASE_PREFIXED_CHANGELOG);
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            assertTrue(defaults.contains("id=\"" + step.changeSet() + "\""), step.changeSet());
            assertTrue(defaults.contains(STORE + SchemaMigrations.DEFAULT_NAMES + step.file()), step.toString());
            assertTrue(prefixed.contains("id=\"" + step.changeSet() + "\""), step.changeSet());
            assertTrue(prefixed.contains(STORE + SchemaMigrations.TEMPLATES + step.file()), step.toString());
        }
    }

    /** The fixture's schema as the first release's Flyway migrations left it: steps 0.1 and 0.2. */
    private static void released(PostgresFixture fixture) {
        assertEquals(2, Migrations.configure(fixture).locations(Migrations.FLYWAY_LOCATION)
                .target(Migrations.RELEASED_VERSION).load().migrate().migrationsExecuted);
    }

    private static long count(Jdbi jdbi, String sql) {
        return jdbi.withHandle(handle -> handle.createQuery(sql).mapTo(Long.class).one());
    }

    private static Map<String, SchemaMigrations.Recorded> recorded(Jdbi jdbi, InboxTables tables) {
        return jdbi.withHandle(handle -> {
            try {
                return SchemaMigrations.read(handle.getConnection(), tables);
            } catch (SQLException e) {
                throw new AssertionError("reading " + tables.schemaTable(), e);
            }
        });
    }

    /** A claim as the first release's store sends it: without the result columns. */
    private static void insertAsReleased(Jdbi jdbi, String table, String inbox, String id) {
        jdbi.useHandle(handle -> handle.execute("INSERT INTO " + table + " (" + InboxRows.COLUMNS
                        + ") VALUES (?, ?, 1, 'inbox.int64', 1, ?, NULL, ?)", inbox, id, new byte[32],
                OffsetDateTime.now(ZoneOffset.UTC)));
    }

    private static void worksUnderValidate(PostgresFixture fixture, InboxTables tables) {
        try (PostgresInbox inbox = PostgresInbox.builder(fixture.jdbi()).name("orders").tables(tables)
                .schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("order-1", Content.of(1), tx -> 1));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("order-1", Content.of(1), tx -> 1));
            assertInstanceOf(Outcome.Conflict.class, inbox.apply("order-1", Content.of(2), tx -> 1));
        }
    }

    @Test
    void aReleasedDatabaseIsRefusedByValidateNamingTheStepsThenMigratedByFlyway() {
        PostgresFixture database = fixture();
        released(database);

        InboxStorageException behind = assertThrows(InboxStorageException.class,
                () -> PostgresInbox.builder(database.jdbi()).schema(SchemaMode.VALIDATE).build());
        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, behind.kind());
        assertTrue(behind.getMessage().contains("at inbox schema 1.0"), behind.getMessage());
        assertTrue(behind.getMessage().contains("V0_3__schema_revision, V0_4__stored_results"), behind.getMessage());
        assertTrue(behind.getMessage().contains("inbox-schema-revision-1, inbox-stored-results-1"), behind.getMessage());
        insertAsReleased(database.jdbi(), "inbox_message", "orders", "before");

        assertEquals(2, Migrations.flyway(database), "0.3 and 0.4");

        assertTrue(Migrations.configure(database).locations(Migrations.FLYWAY_LOCATION).load().validateWithResult()
                .validationSuccessful, "flyway validate");
        assertEquals(new SchemaMigrations.Level(1, 2),
                recorded(database.jdbi(), InboxTables.defaults()).get(SchemaMigrations.INBOX).level());
        worksUnderValidate(database, InboxTables.defaults());
        // The first release's store goes on working on the migrated table: the step only added columns.
        insertAsReleased(database.jdbi(), "inbox_message", "orders", "after");
        try (PostgresInbox inbox = PostgresInbox.builder(database.jdbi()).name("orders").schema(SchemaMode.VALIDATE).build()) {
            InboxRecord before = inbox.find("before").orElseThrow();
            assertTrue(before.result().isEmpty(), "a row from before has no result");
            assertTrue(inbox.find("after").orElseThrow().result().isEmpty());
        }
    }

    @Test
    void aReleasedDatabaseIsMigratedByLiquibase() throws Exception {
        PostgresFixture database = fixture();
        Migrations.liquibase(database.schema(), Migrations.LIQUIBASE_RELEASED_CHANGELOG, Map.of());
        assertEquals(new SchemaMigrations.Level(1, 0),
                recorded(database.jdbi(), InboxTables.defaults()).get(SchemaMigrations.INBOX).level());

        Migrations.liquibase(database);

        assertEquals(List.of("inbox-schema-1", "inbox-kafka-offset-1", "inbox-schema-revision-1", "inbox-stored-results-1"),
                database.jdbi().withHandle(handle -> handle.createQuery(
                        "SELECT id FROM databasechangelog ORDER BY orderexecuted").mapTo(String.class).list()));
        SchemaMigrations.Recorded inbox = recorded(database.jdbi(), InboxTables.defaults()).get(SchemaMigrations.INBOX);
        assertEquals(new SchemaMigrations.Level(1, 2), inbox.level());
        assertEquals("0.1.0", inbox.minRelease());
        worksUnderValidate(database, InboxTables.defaults());
        insertAsReleased(database.jdbi(), "inbox_message", "orders", "after");
    }

    @Test
    void createOverAReleasedDatabaseRunsTheMissingStepsAndFlywayFindsThemHarmless() {
        PostgresFixture database = fixture();
        released(database);

        PostgresInbox.builder(database.jdbi()).build().close();

        SchemaMigrations.Recorded inbox = recorded(database.jdbi(), InboxTables.defaults()).get(SchemaMigrations.INBOX);
        assertEquals(new SchemaMigrations.Level(1, 2), inbox.level());
        assertEquals("0.1.0", inbox.minRelease());
        assertEquals(new SchemaMigrations.Level(1, 0),
                recorded(database.jdbi(), InboxTables.defaults()).get(SchemaMigrations.KAFKA_OFFSET).level());
        worksUnderValidate(database, InboxTables.defaults());
        // A team that later runs the migrations over what CREATE did finds the steps idempotent.
        assertEquals(2, Migrations.flyway(database));
        assertEquals(new SchemaMigrations.Level(1, 2),
                recorded(database.jdbi(), InboxTables.defaults()).get(SchemaMigrations.INBOX).level());
    }

    @Test
    void thePrefixedFlywayLocationMakesPrefixedTablesAndTwoPrefixesShareASchema() {
        PostgresFixture database = fixture();
        String schema = database.schema();

        assertEquals(4, Migrations.configurePrefixed(schema, "orders_").table("orders_flyway_history")
                .load().migrate().migrationsExecuted);
        assertEquals(4, Migrations.configurePrefixed(schema, "billing_").table("billing_flyway_history")
                .baselineOnMigrate(true).baselineVersion("0").load().migrate().migrationsExecuted);

        List<String> tables = database.jdbi().withHandle(handle -> handle.createQuery(
                "SELECT tablename FROM pg_tables WHERE schemaname = :schema ORDER BY tablename")
                .bind("schema", schema).mapTo(String.class).list());
        assertEquals(List.of("billing_flyway_history", "billing_horizon", "billing_kafka_offset", "billing_message",
                "billing_schema", "orders_flyway_history", "orders_horizon", "orders_kafka_offset", "orders_message",
                "orders_schema"), tables);
        assertTrue(Migrations.configurePrefixed(schema, "orders_").table("orders_flyway_history").load()
                .validateWithResult().validationSuccessful);
        // The search_path names the schema for one, the InboxTables for the other.
        worksUnderValidate(database, InboxTables.prefix("orders_"));
        worksUnderValidate(database, InboxTables.prefix("billing_").inSchema(schema));
        assertEquals(1L, count(database.jdbi(), "SELECT count(*) FROM pg_indexes WHERE schemaname = '" + schema
                + "' AND indexname = 'billing_message_received'"));
    }

    @Test
    void thePrefixedChangelogMakesTablesOfTheParametersPrefix() throws Exception {
        PostgresFixture database = fixture();

        Migrations.liquibase(database.schema(), Migrations.LIQUIBASE_PREFIXED_CHANGELOG,
                Map.of(SchemaMigrations.PLACEHOLDER, "orders_"));

        List<String> tables = database.jdbi().withHandle(handle -> handle.createQuery(
                "SELECT tablename FROM pg_tables WHERE schemaname = :schema AND tablename NOT LIKE 'databasechangelog%'"
                        + " ORDER BY tablename")
                .bind("schema", database.schema()).mapTo(String.class).list());
        assertEquals(List.of("orders_horizon", "orders_kafka_offset", "orders_message", "orders_schema"), tables);
        assertEquals(new SchemaMigrations.Level(1, 2),
                recorded(database.jdbi(), InboxTables.prefix("orders_")).get(SchemaMigrations.INBOX).level());
        worksUnderValidate(database, InboxTables.prefix("orders_").inSchema(database.schema()));
    }

    @Test
    void thePrefixedChangelogWithoutAParameterMakesTheDefaultNames() throws Exception {
        PostgresFixture database = fixture();

        Migrations.liquibase(database.schema(), Migrations.LIQUIBASE_PREFIXED_CHANGELOG, Map.of());

        worksUnderValidate(database, InboxTables.defaults());
    }

    @Test
    void aNewerRevisionOfTheKnownVersionIsAcceptedAndANewerVersionRefusedNamingTheRelease() {
        PostgresFixture database = fixture();
        InboxTables tables = InboxTables.prefix("orders_").inSchema(database.schema());
        PostgresInbox.builder(database.jdbi()).tables(tables).build().close();
        SchemaMigrations.Level known = SchemaMigrations.known(SchemaMigrations.INBOX);
        database.jdbi().useHandle(handle -> handle.execute("UPDATE " + tables.schemaTable()
                + " SET revision = ? WHERE component = 'inbox'", known.revision() + 1));

        try (PostgresInbox created = PostgresInbox.builder(database.jdbi()).name("orders").tables(tables).build()) {
            assertInstanceOf(Outcome.Applied.class, created.apply("order-0", Content.of(1), tx -> 1));
        }
        worksUnderValidate(database, tables);
        assertEquals(new SchemaMigrations.Level(known.version(), known.revision() + 1),
                recorded(database.jdbi(), tables).get(SchemaMigrations.INBOX).level(), "CREATE changed nothing");

        database.jdbi().useHandle(handle -> handle.execute("UPDATE " + tables.schemaTable()
                + " SET version = ?, revision = 0, min_release = '9.9.0' WHERE component = 'inbox'", known.version() + 1));
        for (SchemaMode mode : List.of(SchemaMode.CREATE, SchemaMode.VALIDATE)) {
            InboxStorageException refused = assertThrows(InboxStorageException.class,
                    () -> PostgresInbox.builder(database.jdbi()).tables(tables).schema(mode).build());
            assertEquals(InboxStorageException.Kind.NEWER_SCHEMA, refused.kind(), mode.toString());
            assertTrue(refused.getMessage().contains("9.9.0"), refused.getMessage());
            assertTrue(refused.getMessage().contains("orders_*"), refused.getMessage());
        }
    }

    @Test
    void twoInboxesOnDifferentPrefixesInOneSchemaKeepTheirOwnRecordsHorizonsAndVersions() {
        PostgresFixture database = fixture();
        MutableClock clock = new MutableClock(Instant.parse("2026-01-05T10:00:00Z"));
        InboxTables orders = InboxTables.prefix("orders_").inSchema(database.schema());
        InboxTables billing = InboxTables.prefix("billing_").inSchema(database.schema());
        try (PostgresInbox first = PostgresInbox.builder(database.jdbi()).name("same").tables(orders)
                        .retention(Duration.ofDays(7)).clock(clock).build();
                PostgresInbox second = PostgresInbox.builder(database.jdbi()).name("same").tables(billing)
                        .retention(Duration.ofDays(7)).clock(clock).build()) {
            assertInstanceOf(Outcome.Applied.class, first.apply("id-1", Content.of(1), tx -> 1));
            assertInstanceOf(Outcome.Applied.class, second.apply("id-1", Content.of(2), tx -> 1),
                    "the same id in the other tables is new, whatever its content");
            assertInstanceOf(Outcome.Duplicate.class, first.apply("id-1", Content.of(1), tx -> 1));
            assertInstanceOf(Outcome.Conflict.class, second.apply("id-1", Content.of(1), tx -> 1));
            assertInstanceOf(Outcome.Applied.class, first.apply("id-2", Content.of(1), tx -> 1));

            clock.advance(Duration.ofDays(8));
            assertEquals(2, first.retention().purge().rowsPurged());

            assertTrue(first.find("id-1").isEmpty());
            assertTrue(second.find("id-1").isPresent(), "the other inbox's record is kept");
            assertEquals(1L, count(database.jdbi(), "SELECT count(*) FROM " + orders.horizonTable()));
            assertEquals(0L, count(database.jdbi(), "SELECT count(*) FROM " + billing.horizonTable()),
                    "the other inbox's horizon is its own");
            assertInstanceOf(Outcome.Duplicate.class, second.apply("id-1", Content.of(2), tx -> 1));
        }
        for (InboxTables tables : List.of(orders, billing)) {
            assertEquals(SchemaMigrations.known(SchemaMigrations.INBOX),
                    recorded(database.jdbi(), tables).get(SchemaMigrations.INBOX).level(), tables.toString());
        }
    }

    @Test
    void namesThatAreNotPlainIdentifiersAreRefusedByNameBeforeAnythingIsCreated() {
        PostgresFixture database = fixture();
        String tooLong = "p".repeat(InboxTables.MAX_PREFIX_BYTES + 1);
        for (String prefix : List.of("orders'_", "orders;_", "orders _", "Orders_", tooLong)) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> PostgresInbox.builder(database.jdbi()).tables(InboxTables.prefix(prefix)).build());
            assertTrue(refused.getMessage().contains("table prefix '" + prefix + "'"), refused.getMessage());
        }
        for (String schema : List.of("billing\"x", "billing; DROP SCHEMA public", "billing x")) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> PostgresInbox.builder(database.jdbi()).tables(InboxTables.prefix("orders_").inSchema(schema)).build());
            assertTrue(refused.getMessage().contains("schema '" + schema + "'"), refused.getMessage());
        }
        assertEquals(0L, count(database.admin(), "SELECT count(*) FROM pg_class c JOIN pg_namespace n"
                + " ON n.oid = c.relnamespace WHERE n.nspname = '" + database.schema() + "'"), "nothing was created");
    }

    @Test
    void aMissingSchemaIsRefusedByNameAndCreatesNothing() {
        PostgresFixture database = fixture();
        String missing = database.schema() + "_absent";

        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> PostgresInbox
                .builder(database.jdbi()).tables(InboxTables.prefix("orders_").inSchema(missing)).build());

        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, refused.kind());
        assertTrue(refused.getMessage().contains("schema " + missing + " does not exist"), refused.getMessage());
        assertEquals(0L, count(database.admin(), "SELECT count(*) FROM pg_namespace WHERE nspname = '" + missing + "'"));
    }

    @Test
    void createInAnotherSchemaLeavesAPooledConnectionsSearchPathAsItWas() {
        PostgresFixture database = fixture();
        String other = database.schema() + "_other";
        database.admin().useHandle(handle -> handle.execute("CREATE SCHEMA " + other));
        HikariConfig config = new HikariConfig();
        config.setDataSource(PostgresFixture.dataSource(PostgresFixture.PORT, "-c search_path=" + database.schema()));
        config.setMaximumPoolSize(1);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            Jdbi jdbi = Jdbi.create(pool);
            try (PostgresInbox inbox = PostgresInbox.builder(jdbi).tables(InboxTables.prefix("orders_").inSchema(other))
                    .build()) {
                assertInstanceOf(Outcome.Applied.class, inbox.apply("order-1", Content.of(1), tx -> 1));
            }
            assertEquals(database.schema(), jdbi.withHandle(handle -> handle.createQuery("SHOW search_path")
                    .mapTo(String.class).one()), "the one connection of the pool went back as it came");
            assertEquals(List.of("orders_horizon", "orders_kafka_offset", "orders_message", "orders_schema"),
                    database.admin().withHandle(handle -> handle.createQuery(
                            "SELECT tablename FROM pg_tables WHERE schemaname = :schema ORDER BY tablename")
                            .bind("schema", other).mapTo(String.class).list()));
        } finally {
            database.admin().useHandle(handle -> handle.execute("DROP SCHEMA " + other + " CASCADE"));
        }
    }
}
