package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tables Flyway and Liquibase create from the jar's migrations are the ones the inbox creates
 * and pass {@link SchemaMode#VALIDATE}; a file of today's release (steps 0.1 and 0.2) is migrated
 * to the new steps by either tool or by schema mode CREATE; the version check accepts a newer
 * revision and refuses a newer version.
 */
class SqliteMigrationTest {

    private static final String KNOWN = SchemaMigrations.known(SchemaMigrations.INBOX).toString();

    @TempDir
    Path dir;

    /** Every object of the file whose name starts with {@code prefix}, its SQL without comments and with single spaces. */
    static List<String> objects(Path file, String prefix) {
        return SqliteInbox.jdbi(file).withHandle(handle -> handle.createQuery(
                        "SELECT type || ' ' || name || ': ' || sql FROM sqlite_master"
                                + " WHERE substr(name, 1, length(:prefix)) = :prefix AND sql IS NOT NULL ORDER BY name")
                .bind("prefix", prefix)
                .mapTo(String.class)
                .map(sql -> sql.replaceAll("--[^\\n]*", " ").replaceAll("\\s+", " ").trim())
                .list());
    }

    private static List<String> inboxSchema(Path file) {
        return objects(file, "inbox_");
    }

    /** The inbox component's level in {@code <prefix>schema}, as {@code version.revision}. */
    static String level(Path file, String prefix) {
        return SqliteInbox.jdbi(file).withHandle(handle -> handle.createQuery("SELECT version || '.' || "
                + (hasRevision(handle.getConnection(), prefix) ? "revision" : "0") + " FROM " + prefix
                + "schema WHERE component = 'inbox'").mapTo(String.class).one());
    }

    private static boolean hasRevision(Connection connection, String prefix) {
        try (ResultSet columns = connection.getMetaData().getColumns(null, null, prefix + "schema", "revision")) {
            return columns.next();
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    private List<String> createdByTheInbox() {
        Path file = dir.resolve("created.db");
        SqliteInbox.builder(file).build().close();
        return inboxSchema(file);
    }

    /** What the inbox of today's release runs for a claim and its read, on tables it did not create. */
    private static void todaysClaimAndRead(Path file, String id) {
        SqliteInbox.jdbi(file).useHandle(handle -> {
            assertEquals(1, handle.execute("INSERT INTO inbox_message (" + InboxRows.COLUMNS + ") VALUES ("
                    + InboxRows.PLACEHOLDERS + ") ON CONFLICT (inbox, id) DO NOTHING",
                    "today", id, 1, "inbox.int64", 1, new byte[32], null, 1_000L));
            assertEquals(id, handle.createQuery("SELECT " + InboxRows.COLUMNS + " FROM inbox_message WHERE inbox = ?"
                    + " AND id = ?").bind(0, "today").bind(1, id).map((rs, ctx) -> rs.getString("id")).one());
            // Today's version check reads only column version, and takes 1 as its own.
            assertEquals(1, handle.createQuery("SELECT version FROM inbox_schema WHERE component = 'inbox'")
                    .mapTo(Integer.class).one());
        });
    }

    private static void worksUnderValidate(Path file, InboxTables tables) {
        try (SqliteInbox inbox = SqliteInbox.builder(file).tables(tables).schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void flywayMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() {
        Path file = dir.resolve("flyway.db");
        Migrations.flyway(file);

        assertEquals(createdByTheInbox(), inboxSchema(file));
        assertEquals(List.of("table inbox_horizon", "table inbox_kafka_offset", "table inbox_message",
                "index inbox_message_received", "table inbox_schema"),
                inboxSchema(file).stream().map(s -> s.substring(0, s.indexOf(':'))).toList());
        assertEquals(KNOWN, level(file, "inbox_"));
        worksUnderValidate(file, InboxTables.defaults());
    }

    @Test
    void liquibaseMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() throws Exception {
        Path file = dir.resolve("liquibase.db");
        Migrations.liquibase(file);

        assertEquals(createdByTheInbox(), inboxSchema(file));
        assertEquals(KNOWN, level(file, "inbox_"));
        worksUnderValidate(file, InboxTables.defaults());
    }

    @Test
    void theInboxBuildsOverAFlywayMigratedFileInCreateModeWithoutDdl() {
        Path file = dir.resolve("flyway.db");
        Migrations.flyway(file);
        List<String> migrated = inboxSchema(file);
        int schemaVersion = schemaVersion(file);

        try (SqliteInbox inbox = SqliteInbox.builder(file).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
        assertEquals(migrated, inboxSchema(file));
        assertEquals(schemaVersion, schemaVersion(file), "no DDL ran over tables at the known level");
        // Flyway still finds its history in order, and nothing left to do.
        assertEquals(0, Migrations.flywayConfig(file).load().migrate().migrationsExecuted);
    }

    /** SQLite's schema cookie, which every DDL statement raises. */
    private static int schemaVersion(Path file) {
        return SqliteInbox.jdbi(file).withHandle(handle ->
                handle.createQuery("PRAGMA schema_version").mapTo(Integer.class).one());
    }

    @Test
    void validateRefusesAFileWithoutTheInboxsTablesNamingEveryMigrationAndCreatesNothing() {
        Path file = dir.resolve("empty.db");
        SqliteInbox.jdbi(file).useHandle(handle -> handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY)"));

        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(file).schema(SchemaMode.VALIDATE).build());

        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, refused.kind());
        assertTrue(refused.getMessage().contains("tables inbox_* are missing"), refused.getMessage());
        assertTrue(refused.getMessage().contains("V0_1__inbox_schema, V0_3__schema_revision, V0_4__stored_results"),
                refused.getMessage());
        assertTrue(refused.getMessage().contains("classpath:dev/idempotent/inbox/sqlite/flyway "), refused.getMessage());
        assertTrue(refused.getMessage().contains("inbox-changelog-prefixed.xml with parameter inbox_table_prefix=inbox_"),
                refused.getMessage());
        assertEquals(List.of(), inboxSchema(file));
    }

    @Test
    void validateRefusesTablesWithoutTheInboxsRow() {
        Path file = dir.resolve("partial.db");
        Migrations.flyway(file);
        SqliteInbox.jdbi(file).useHandle(handle -> handle.execute("DELETE FROM inbox_schema WHERE component = 'inbox'"));

        InboxStorageException noVersion = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(file).schema(SchemaMode.VALIDATE).build());
        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, noVersion.kind());
        assertTrue(noVersion.getMessage().contains("V0_1__inbox_schema"), noVersion.getMessage());
    }

    @Test
    void aFileOfTodaysReleaseIsMigratedByFlywayAndKeepsWorkingForTodaysCode() {
        Path file = dir.resolve("today.db");
        Migrations.flywayConfig(file).target(Migrations.TODAYS_RELEASE).load().migrate();
        assertEquals("1.0", level(file, "inbox_"));
        todaysClaimAndRead(file, "before");

        InboxStorageException behind = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(file).schema(SchemaMode.VALIDATE).build());
        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, behind.kind());
        assertTrue(behind.getMessage().contains("at inbox schema 1.0"), behind.getMessage());
        assertTrue(behind.getMessage().contains("run migrations V0_3__schema_revision, V0_4__stored_results"),
                behind.getMessage());
        assertTrue(behind.getMessage().contains("inbox-schema-revision-1, inbox-stored-results-1"), behind.getMessage());

        assertEquals(2, Migrations.flywayConfig(file).load().migrate().migrationsExecuted);
        assertTrue(Migrations.flywayConfig(file).load().validateWithResult().validationSuccessful);
        assertEquals(KNOWN, level(file, "inbox_"));
        assertEquals(createdByTheInbox(), inboxSchema(file));
        worksUnderValidate(file, InboxTables.defaults());
        // The release before keeps claiming and reading on the migrated tables: the steps only added.
        todaysClaimAndRead(file, "after");
        try (SqliteInbox inbox = SqliteInbox.builder(file).name("today").schema(SchemaMode.VALIDATE).build()) {
            // The row today's code wrote is read back, without a result, and its other fingerprint tells.
            assertInstanceOf(Outcome.Conflict.class, inbox.apply("before", Content.of(7), tx -> 1));
        }
    }

    @Test
    void aFileOfTodaysReleaseIsMigratedByLiquibase() throws Exception {
        Path file = dir.resolve("today.db");
        Migrations.liquibaseFirst(file, 2);
        assertEquals("1.0", level(file, "inbox_"));
        todaysClaimAndRead(file, "before");

        Migrations.liquibase(file);

        assertEquals(KNOWN, level(file, "inbox_"));
        assertEquals(createdByTheInbox(), inboxSchema(file));
        assertEquals(List.of("inbox-schema-1", "inbox-kafka-offset-1", "inbox-schema-revision-1", "inbox-stored-results-1"),
                SqliteInbox.jdbi(file).withHandle(handle -> handle.createQuery(
                        "SELECT id FROM databasechangelog ORDER BY orderexecuted").mapTo(String.class).list()));
        Migrations.liquibaseValidate(file, null);
        worksUnderValidate(file, InboxTables.defaults());
        todaysClaimAndRead(file, "after");
    }

    @Test
    void createUpgradesAFileOfTodaysReleaseAndRecordsTheLevel() {
        Path file = dir.resolve("today.db");
        Migrations.flywayConfig(file).target(Migrations.TODAYS_RELEASE).load().migrate();
        todaysClaimAndRead(file, "before");

        try (SqliteInbox inbox = SqliteInbox.builder(file).name("today").build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("new", Content.of(7), tx -> 1));
        }

        assertEquals(KNOWN, level(file, "inbox_"));
        assertEquals("0.1.0", SqliteInbox.jdbi(file).withHandle(handle -> handle.createQuery(
                "SELECT min_release FROM inbox_schema WHERE component = 'inbox'").mapTo(String.class).one()));
        assertEquals(createdByTheInbox(), inboxSchema(file));
        todaysClaimAndRead(file, "after");
    }

    @Test
    void flywayPrefixedLocationCreatesTwoPrefixesSideBySideWithTwoHistories() {
        Path file = dir.resolve("prefixed.db");
        Migrations.flywayPrefixed(file, "orders_");
        Migrations.flywayPrefixed(file, "billing_");

        for (String prefix : List.of("orders_", "billing_")) {
            assertEquals(List.of("table " + prefix + "horizon", "table " + prefix + "kafka_offset",
                    "table " + prefix + "message", "index " + prefix + "message_received", "table " + prefix + "schema"),
                    objects(file, prefix).stream().map(s -> s.substring(0, s.indexOf(':')))
                            .filter(s -> !s.contains(prefix + "flyway_history")).toList());
            assertEquals(KNOWN, level(file, prefix));
            assertTrue(Migrations.flywayPrefixedConfig(file, prefix).load().validateWithResult().validationSuccessful);
            worksUnderValidate(file, InboxTables.prefix(prefix));
        }
        assertEquals(List.of(), inboxSchema(file), "nothing under the default names");
        // The templates filled in with a prefix are the default-name tables under other names.
        assertEquals(createdByTheInbox().stream().filter(s -> !s.contains("flyway")).toList(),
                objects(file, "orders_").stream().filter(s -> !s.contains("flyway_history"))
                        .map(s -> s.replace("orders_", "inbox_")).toList());
    }

    @Test
    void liquibasePrefixedChangelogFillsTheParameterIntoTheTemplates() throws Exception {
        Path file = dir.resolve("prefixed.db");
        Migrations.liquibasePrefixed(file, "orders_");

        assertEquals(List.of("table orders_databasechangelog", "table orders_databasechangeloglock",
                "table orders_horizon", "table orders_kafka_offset", "table orders_message",
                "index orders_message_received", "table orders_schema"),
                objects(file, "orders_").stream().map(s -> s.substring(0, s.indexOf(':'))).toList());
        assertEquals(List.of(), objects(file, "$"), "no table named with the placeholder unfilled");
        assertEquals(List.of(), inboxSchema(file));
        assertEquals(KNOWN, level(file, "orders_"));
        Migrations.liquibaseValidate(file, "orders_");
        worksUnderValidate(file, InboxTables.prefix("orders_"));
    }

    @Test
    void liquibasePrefixedChangelogWithoutTheParameterUsesTheDefaultPrefix() throws Exception {
        Path file = dir.resolve("default.db");
        Migrations.liquibasePrefixedWithoutParameter(file);

        assertEquals(createdByTheInbox(), inboxSchema(file));
        worksUnderValidate(file, InboxTables.defaults());
    }

    @Test
    void aNewerRevisionOfTheKnownVersionIsAcceptedByCreateAndValidate() {
        Path file = dir.resolve("revision.db");
        SqliteInbox.builder(file).build().close();
        int nextRevision = SchemaMigrations.known(SchemaMigrations.INBOX).revision() + 1;
        SqliteInbox.jdbi(file).useHandle(handle ->
                handle.execute("UPDATE inbox_schema SET revision = ? WHERE component = 'inbox'", nextRevision));
        int schemaVersion = schemaVersion(file);

        try (SqliteInbox inbox = SqliteInbox.builder(file).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-8", Content.of(8), tx -> 1));
        }
        worksUnderValidate(file, InboxTables.defaults());
        assertEquals(schemaVersion, schemaVersion(file), "CREATE ran no DDL over a newer revision");
        assertEquals("1." + nextRevision, level(file, "inbox_"));
    }

    @Test
    void aNewerVersionIsRefusedByCreateAndValidateNamingTheReleaseItNeeds() {
        Path file = dir.resolve("newer.db");
        Migrations.flyway(file);
        Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> handle.execute(
                "UPDATE inbox_schema SET version = 2, revision = 0, min_release = '9.9.0' WHERE component = 'inbox'"));
        int schemaVersion = schemaVersion(file);

        for (SchemaMode mode : List.of(SchemaMode.CREATE, SchemaMode.VALIDATE)) {
            InboxStorageException refused = assertThrows(InboxStorageException.class,
                    () -> SqliteInbox.builder(file).schema(mode).build(), mode.toString());
            assertEquals(InboxStorageException.Kind.NEWER_SCHEMA, refused.kind(), mode.toString());
            assertTrue(refused.getMessage().contains("release 9.9.0"), refused.getMessage());
        }
        assertEquals(schemaVersion, schemaVersion(file), "nothing changed");
        assertFalse(inboxSchema(file).isEmpty());
    }
}
