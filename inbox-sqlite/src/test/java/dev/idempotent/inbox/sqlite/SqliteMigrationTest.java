package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import java.nio.file.Path;
import java.util.List;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The schema Flyway and Liquibase create from the jar's migration is the one the inbox creates,
 * passes {@link SchemaMode#VALIDATE}, and validation refuses what is incomplete.
 */
class SqliteMigrationTest {

    @TempDir
    Path dir;

    /** Every inbox object the file holds, its SQL without comments and with single spaces. */
    private static List<String> inboxSchema(Path file) {
        return SqliteInbox.jdbi(file).withHandle(handle -> handle.createQuery(
                        "SELECT type || ' ' || name || ': ' || sql FROM sqlite_master"
                                + " WHERE name LIKE 'inbox\\_%' ESCAPE '\\' ORDER BY name")
                .mapTo(String.class)
                .map(sql -> sql.replaceAll("--[^\\n]*", " ").replaceAll("\\s+", " ").trim())
                .list());
    }

    private static int version(Path file) {
        return SqliteInbox.jdbi(file).withHandle(handle -> handle.createQuery(
                "SELECT version FROM inbox_schema WHERE component = 'inbox'").mapTo(Integer.class).one());
    }

    private List<String> createdByTheInbox() {
        Path file = dir.resolve("created.db");
        SqliteInbox.builder(file).build().close();
        return inboxSchema(file);
    }

    @Test
    void flywayMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() {
        Path file = dir.resolve("flyway.db");
        Migrations.flyway(file);

        assertEquals(createdByTheInbox(), inboxSchema(file));
        assertEquals(List.of("table inbox_horizon", "table inbox_kafka_offset", "table inbox_message",
                "index inbox_message_received", "table inbox_schema"), inboxSchema(file).stream().map(s -> s.substring(0, s.indexOf(':'))).toList());
        assertEquals(1, version(file));
        try (SqliteInbox inbox = SqliteInbox.builder(file).schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void liquibaseMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() throws Exception {
        Path file = dir.resolve("liquibase.db");
        Migrations.liquibase(file);

        assertEquals(createdByTheInbox(), inboxSchema(file));
        assertEquals(1, version(file));
        try (SqliteInbox inbox = SqliteInbox.builder(file).schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void theInboxBuildsOverAFlywayMigratedFileInCreateModeToo() {
        Path file = dir.resolve("flyway.db");
        Migrations.flyway(file);
        List<String> migrated = inboxSchema(file);

        try (SqliteInbox inbox = SqliteInbox.builder(file).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
        assertEquals(migrated, inboxSchema(file));
        // Flyway still finds its history in order, and nothing left to do.
        assertEquals(0, org.flywaydb.core.Flyway.configure().dataSource(Migrations.url(file), null, null)
                .locations(Migrations.FLYWAY_LOCATION).load().migrate().migrationsExecuted);
    }

    @Test
    void validateRefusesAFileWithoutTheInboxsTablesAndCreatesNothing() {
        Path file = dir.resolve("empty.db");
        SqliteInbox.jdbi(file).useHandle(handle -> handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY)"));

        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(file).schema(SchemaMode.VALIDATE).build());

        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, refused.kind());
        assertTrue(refused.getMessage().contains("inbox_schema is missing"), refused.getMessage());
        assertTrue(refused.getMessage().contains("classpath:dev/idempotent/inbox/sqlite/flyway"), refused.getMessage());
        assertEquals(List.of(), inboxSchema(file));
    }

    @Test
    void validateRefusesAMissingTableOrVersionRow() {
        Path file = dir.resolve("partial.db");
        Migrations.flyway(file);
        Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> handle.execute("DELETE FROM inbox_schema"));

        InboxStorageException noVersion = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(file).schema(SchemaMode.VALIDATE).build());
        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, noVersion.kind());
        assertTrue(noVersion.getMessage().contains("records no version"), noVersion.getMessage());

        jdbi.useHandle(handle -> handle.execute("INSERT INTO inbox_schema VALUES ('inbox', 1)"));
        jdbi.useHandle(handle -> handle.execute("DROP TABLE inbox_horizon"));
        InboxStorageException noTable = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(file).schema(SchemaMode.VALIDATE).build());
        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, noTable.kind());
        assertTrue(noTable.getMessage().contains("inbox_horizon is missing"), noTable.getMessage());
        assertFalse(inboxSchema(file).stream().anyMatch(s -> s.startsWith("table inbox_horizon")),
                "validate created nothing");
    }

    @Test
    void validateRefusesANewerSchemaVersion() {
        Path file = dir.resolve("newer.db");
        Migrations.flyway(file);
        SqliteInbox.jdbi(file).useHandle(handle -> handle.execute("UPDATE inbox_schema SET version = 2"));

        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(file).schema(SchemaMode.VALIDATE).build());

        assertEquals(InboxStorageException.Kind.NEWER_SCHEMA, refused.kind());
    }
}
