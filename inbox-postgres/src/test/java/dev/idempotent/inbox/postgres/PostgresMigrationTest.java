package dev.idempotent.inbox.postgres;

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
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The schema Flyway and Liquibase create from the jar's migration is the one the inbox creates,
 * passes {@link SchemaMode#VALIDATE}, and validation refuses what is incomplete; each in a schema
 * of its own.
 */
class PostgresMigrationTest {

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

    /** The inbox's columns, indexes and version row in the fixture's schema, with the schema's name taken out. */
    private static List<String> inboxSchema(PostgresFixture fixture) {
        String schema = fixture.schema();
        List<String> description = new ArrayList<>(fixture.admin().withHandle(handle -> handle.createQuery("""
                        SELECT table_name || '.' || column_name || ' ' || data_type || ' nullable=' || is_nullable
                               || ' collation=' || coalesce(collation_name, '-') || ' #' || ordinal_position
                        FROM information_schema.columns
                        WHERE table_schema = :schema AND table_name LIKE 'inbox\\_%'
                        ORDER BY table_name, ordinal_position""")
                .bind("schema", schema).mapTo(String.class).list()));
        description.addAll(fixture.admin().withHandle(handle -> handle.createQuery("""
                        SELECT replace(indexdef, :schema || '.', '') FROM pg_indexes
                        WHERE schemaname = :schema AND tablename LIKE 'inbox\\_%' ORDER BY indexname""")
                .bind("schema", schema).mapTo(String.class).list()));
        boolean versioned = fixture.jdbi().withHandle(handle -> handle.createQuery(
                "SELECT to_regclass('inbox_schema') IS NOT NULL").mapTo(Boolean.class).one());
        if (versioned) {
            description.addAll(fixture.jdbi().withHandle(handle -> handle.createQuery(
                    "SELECT component || '=' || version || '.' || revision || ' ' || coalesce(min_release, '-')"
                            + " FROM inbox_schema ORDER BY component").mapTo(String.class).list()));
        }
        return description;
    }

    private List<String> createdByTheInbox() {
        PostgresFixture created = fixture();
        created.builder().build().close();
        return inboxSchema(created);
    }

    @Test
    void flywayMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() {
        PostgresFixture migrated = fixture();
        assertEquals(4, Migrations.flyway(migrated), "0.1, the inbox's tables, 0.2, the Kafka offsets', 0.3 and 0.4");

        List<String> schema = inboxSchema(migrated);
        assertEquals(createdByTheInbox(), schema);
        assertTrue(schema.contains("inbox_message.id text nullable=NO collation=C #2"), schema.toString());
        assertTrue(schema.contains("inbox=1.2 0.1.0"), schema.toString());
        assertTrue(schema.contains("inbox_message.result bytea nullable=YES collation=- #11"), schema.toString());
        try (PostgresInbox inbox = migrated.builder().schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
        assertEquals(0, Migrations.flyway(migrated), "Flyway finds nothing left to do after the inbox ran");
    }

    @Test
    void liquibaseMigratedSchemaIsTheOneTheInboxCreatesAndPassesValidate() throws Exception {
        PostgresFixture migrated = fixture();
        Migrations.liquibase(migrated);

        assertEquals(createdByTheInbox(), inboxSchema(migrated));
        try (PostgresInbox inbox = migrated.builder().schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void validateRefusesASchemaWithoutTheInboxsTablesAndCreatesNothing() {
        PostgresFixture empty = fixture();

        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> empty.builder().schema(SchemaMode.VALIDATE).build());

        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, refused.kind());
        assertTrue(refused.getMessage().contains("schema " + empty.schema()), refused.getMessage());
        assertTrue(refused.getMessage().contains("classpath:dev/idempotent/inbox/postgres/flyway"), refused.getMessage());
        assertEquals(List.of(), inboxSchema(empty));
    }

    @Test
    void validateRefusesAMissingTableOrVersionRow() {
        PostgresFixture partial = fixture();
        Migrations.flyway(partial);
        partial.jdbi().useHandle(handle -> handle.execute("DELETE FROM inbox_schema"));

        InboxStorageException noVersion = assertThrows(InboxStorageException.class,
                () -> partial.builder().schema(SchemaMode.VALIDATE).build());
        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, noVersion.kind());
        assertTrue(noVersion.getMessage().contains("V0_1__inbox_schema, V0_3__schema_revision, V0_4__stored_results"),
                noVersion.getMessage());

        partial.jdbi().useHandle(handle -> handle.execute(
                "INSERT INTO inbox_schema (component, version, revision) VALUES ('inbox', 1, 2)"));
        partial.jdbi().useHandle(handle -> handle.execute("DROP TABLE inbox_horizon"));
        InboxStorageException noTable = assertThrows(InboxStorageException.class,
                () -> partial.builder().schema(SchemaMode.VALIDATE).build());
        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, noTable.kind());
        assertTrue(noTable.getMessage().contains("inbox_horizon is missing"), noTable.getMessage());
    }

    @Test
    void besideAnApplicationsOwnMigrationsOnANewDatabaseTheInboxsRunFirst() {
        PostgresFixture fresh = fixture();

        int executed = Migrations.configure(fresh)
                .locations(Migrations.APPLICATION_LOCATION, Migrations.FLYWAY_LOCATION).load().migrate().migrationsExecuted;

        assertEquals(5, executed);
        assertEquals(List.of("0.1", "0.2", "0.3", "0.4", "1"), fresh.jdbi().withHandle(handle -> handle.createQuery(
                "SELECT version FROM flyway_schema_history ORDER BY installed_rank").mapTo(String.class).list()));
        fresh.builder().schema(SchemaMode.VALIDATE).build().close();
    }

    @Test
    void addedToADatabaseWithHistoryTheInboxsMigrationNeedsOutOfOrderOrAHistoryOfItsOwn() {
        PostgresFixture outOfOrder = fixture();
        Migrations.configure(outOfOrder).locations(Migrations.APPLICATION_LOCATION).load().migrate();

        FlywayException refused = assertThrows(FlywayException.class, () -> Migrations.configure(outOfOrder)
                .locations(Migrations.APPLICATION_LOCATION, Migrations.FLYWAY_LOCATION).load().migrate());
        assertTrue(refused.getMessage().contains("0.1"), refused.getMessage());
        assertEquals(4, Migrations.configure(outOfOrder).outOfOrder(true)
                .locations(Migrations.APPLICATION_LOCATION, Migrations.FLYWAY_LOCATION).load().migrate().migrationsExecuted);
        outOfOrder.builder().schema(SchemaMode.VALIDATE).build().close();

        PostgresFixture ownHistory = fixture();
        Migrations.configure(ownHistory).locations(Migrations.APPLICATION_LOCATION).load().migrate();
        assertEquals(4, Migrations.configure(ownHistory).locations(Migrations.FLYWAY_LOCATION)
                .table("inbox_flyway_history").baselineOnMigrate(true).baselineVersion("0")
                .load().migrate().migrationsExecuted);
        ownHistory.builder().schema(SchemaMode.VALIDATE).build().close();
    }

    @Test
    void noneNeitherCreatesNorChecks() {
        PostgresFixture empty = fixture();

        empty.builder().schema(SchemaMode.NONE).build().close();

        assertEquals(List.of(), inboxSchema(empty));
    }
}
