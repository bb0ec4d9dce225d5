package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The schema Flyway and Liquibase create from the jar's migration is the one the inbox creates and
 * passes {@link SchemaMode#VALIDATE}; each in a database of its own.
 */
class MariaDbMigrationTest {

    private final List<MariaDbFixture> fixtures = new ArrayList<>();

    private MariaDbFixture fixture() {
        MariaDbFixture fixture = new MariaDbFixture();
        fixtures.add(fixture);
        return fixture;
    }

    @AfterEach
    void dropDatabases() {
        fixtures.forEach(MariaDbFixture::close);
    }

    /** The inbox's tables, columns and indexes in the fixture's database, and its version row. */
    private static List<String> inboxSchema(MariaDbFixture fixture) {
        String database = fixture.database();
        List<String> description = new ArrayList<>(fixture.admin().withHandle(handle -> handle.createQuery("""
                        SELECT CONCAT(TABLE_NAME, ' ', ENGINE, ' ', ROW_FORMAT) FROM information_schema.TABLES
                        WHERE TABLE_SCHEMA = :db AND TABLE_NAME LIKE 'inbox\\_%' ORDER BY TABLE_NAME""")
                .bind("db", database).mapTo(String.class).list()));
        description.addAll(fixture.admin().withHandle(handle -> handle.createQuery("""
                        SELECT CONCAT(TABLE_NAME, '.', COLUMN_NAME, ' ', COLUMN_TYPE, ' nullable=', IS_NULLABLE,
                                      ' collation=', COALESCE(COLLATION_NAME, '-'), ' #', ORDINAL_POSITION)
                        FROM information_schema.COLUMNS
                        WHERE TABLE_SCHEMA = :db AND TABLE_NAME LIKE 'inbox\\_%'
                        ORDER BY TABLE_NAME, ORDINAL_POSITION""")
                .bind("db", database).mapTo(String.class).list()));
        description.addAll(fixture.admin().withHandle(handle -> handle.createQuery("""
                        SELECT CONCAT(TABLE_NAME, ' ', INDEX_NAME, ' ', SEQ_IN_INDEX, ' ', COLUMN_NAME, ' unique=',
                                      1 - NON_UNIQUE)
                        FROM information_schema.STATISTICS
                        WHERE TABLE_SCHEMA = :db AND TABLE_NAME LIKE 'inbox\\_%'
                        ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX""")
                .bind("db", database).mapTo(String.class).list()));
        if (description.stream().anyMatch(line -> line.startsWith("inbox_schema "))) {
            description.addAll(fixture.jdbi().withHandle(handle -> handle.createQuery(
                    "SELECT CONCAT(component, '=', version) FROM inbox_schema ORDER BY component")
                    .mapTo(String.class).list()));
        }
        return description;
    }

    private List<String> createdByTheInbox() {
        MariaDbFixture created = fixture();
        created.builder().build().close();
        return inboxSchema(created);
    }

    @Test
    void flywayMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() {
        MariaDbFixture migrated = fixture();
        assertEquals(2, Migrations.flyway(migrated), "0.1, the inbox's tables, and 0.2, the Kafka offsets'");

        List<String> schema = inboxSchema(migrated);
        assertEquals(createdByTheInbox(), schema);
        assertTrue(schema.contains("inbox=1"), schema.toString());
        try (MariaDbInbox inbox = migrated.builder().schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void liquibaseMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() throws Exception {
        MariaDbFixture migrated = fixture();
        Migrations.liquibase(migrated);

        assertEquals(createdByTheInbox(), inboxSchema(migrated));
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
        assertEquals(List.of(), inboxSchema(empty));
    }
}
