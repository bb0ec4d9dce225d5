package dev.idempotent.inbox.spi.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations.Level;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations.Recorded;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations.Step;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SchemaMigrationsTest {

    private static final InboxTables ORDERS = InboxTables.prefix("orders_").inSchema("billing");

    private static Map<String, Recorded> rows(Object... componentAndLevel) {
        Map<String, Recorded> rows = new LinkedHashMap<>();
        for (int i = 0; i < componentAndLevel.length; i += 2) {
            rows.put((String) componentAndLevel[i], (Recorded) componentAndLevel[i + 1]);
        }
        return rows;
    }

    private static Recorded at(int version, int revision) {
        return new Recorded(new Level(version, revision), null);
    }

    private static List<String> migrations(List<Step> steps) {
        return steps.stream().map(Step::migration).toList();
    }

    @Test
    void stepsAreInFlywayOrderWithTheirFilesAndChangeSets() {
        assertEquals(List.of("0.1", "0.2", "0.3", "0.4"), migrations(SchemaMigrations.STEPS));
        Step revision = SchemaMigrations.STEPS.get(2);
        assertEquals("V0_3__schema_revision.sql", revision.file());
        assertEquals("V0_3__schema_revision", revision.toString());
        assertEquals("inbox-schema-revision-1", revision.changeSet());
        assertEquals("V0_4__stored_results.sql", SchemaMigrations.STEPS.get(3).file());
        // A component's steps raise its level, never lower it.
        for (String component : List.of(SchemaMigrations.INBOX, SchemaMigrations.KAFKA_OFFSET)) {
            List<Level> levels = SchemaMigrations.STEPS.stream().filter(s -> s.component().equals(component))
                    .map(Step::level).toList();
            for (int i = 1; i < levels.size(); i++) {
                assertTrue(levels.get(i - 1).compareTo(levels.get(i)) < 0, component + " " + levels);
            }
        }
    }

    @Test
    void knownIsTheLevelOfEachComponentsLastStep() {
        assertEquals(new Level(1, 2), SchemaMigrations.known(SchemaMigrations.INBOX));
        assertEquals(new Level(1, 0), SchemaMigrations.known(SchemaMigrations.KAFKA_OFFSET));
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> SchemaMigrations.known("outbox"));
        assertTrue(unknown.getMessage().contains("outbox"), unknown.getMessage());
    }

    @Test
    void levelsOrderByVersionThenRevision() {
        assertTrue(new Level(1, 9).compareTo(new Level(2, 0)) < 0);
        assertTrue(new Level(1, 2).compareTo(new Level(1, 1)) > 0);
        assertEquals(0, new Level(1, 2).compareTo(new Level(1, 2)));
        assertEquals("1.2", new Level(1, 2).toString());
    }

    @Test
    void pendingIsEveryStepAboveWhatIsRecorded() {
        assertEquals(List.of("0.1", "0.2", "0.3", "0.4"), migrations(SchemaMigrations.pending(Map.of())));
        // Today's release: V0_1 and V0_2 ran, before revisions existed.
        assertEquals(List.of("0.3", "0.4"), migrations(SchemaMigrations.pending(rows(
                SchemaMigrations.INBOX, at(1, 0), SchemaMigrations.KAFKA_OFFSET, at(1, 0)))));
        // The Kafka offsets' table is its own component: missing, it is pending on its own.
        assertEquals(List.of("0.2", "0.4"), migrations(SchemaMigrations.pending(rows(SchemaMigrations.INBOX, at(1, 1)))));
        assertEquals(List.of(), SchemaMigrations.pending(rows(
                SchemaMigrations.INBOX, at(1, 2), SchemaMigrations.KAFKA_OFFSET, at(1, 0))));
        // A newer revision or version is ahead of every step: nothing to run.
        assertEquals(List.of(), SchemaMigrations.pending(rows(
                SchemaMigrations.INBOX, at(1, 7), SchemaMigrations.KAFKA_OFFSET, at(2, 0))));
    }

    @Test
    void fillReplacesEveryPlaceholderAndNothingElse() {
        String template = "CREATE TABLE ${inbox_table_prefix}message (x TEXT);\n"
                + "CREATE INDEX ${inbox_table_prefix}message_received ON ${inbox_table_prefix}message (x);"
                + " -- $inbox_table_prefix {inbox_table_prefix}";
        assertEquals("CREATE TABLE orders_message (x TEXT);\n"
                + "CREATE INDEX orders_message_received ON orders_message (x); -- $inbox_table_prefix {inbox_table_prefix}",
                SchemaMigrations.fill(template, "orders_"));
        assertEquals("${" + SchemaMigrations.PLACEHOLDER + "}", "${inbox_table_prefix}");
    }

    @Test
    void refuseIncompatibleAcceptsANewerRevisionAndUnknownComponents() {
        SchemaMigrations.refuseIncompatible(rows(SchemaMigrations.INBOX, at(1, 99)), ORDERS);
        SchemaMigrations.refuseIncompatible(rows("outbox", at(7, 0)), ORDERS);
        SchemaMigrations.refuseIncompatible(Map.of(), ORDERS);
    }

    @Test
    void refuseIncompatibleNamesTheReleaseANewerVersionNeeds() {
        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> SchemaMigrations.refuseIncompatible(rows(SchemaMigrations.INBOX,
                        new Recorded(new Level(2, 0), "9.9.0")), ORDERS));

        assertEquals(InboxStorageException.Kind.NEWER_SCHEMA, refused.kind());
        assertEquals("the tables orders_* in schema billing hold component 'inbox' at schema 2.0, which needs release"
                + " 9.9.0 of this library or later; this release knows schema 1.2 at most", refused.getMessage());

        InboxStorageException unnamed = assertThrows(InboxStorageException.class,
                () -> SchemaMigrations.refuseIncompatible(rows(SchemaMigrations.KAFKA_OFFSET, at(2, 0)),
                        InboxTables.defaults()));
        assertTrue(unnamed.getMessage().contains("component 'kafka_offset' at schema 2.0, which needs a newer release"),
                unnamed.getMessage());
    }

    @Test
    void validatePassesTheKnownLevelAndANewerRevision() {
        SchemaMigrations.validate(rows(SchemaMigrations.INBOX, at(1, 2)), ORDERS, "schema billing", "Flyway");
        SchemaMigrations.validate(rows(SchemaMigrations.INBOX, at(1, 3)), ORDERS, "schema billing", "Flyway");
    }

    @Test
    void validateOfMissingTablesNamesEveryInboxMigration() {
        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> SchemaMigrations.validate(Map.of(), ORDERS, "database test", "Flyway location L"));

        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, refused.kind());
        assertEquals("the tables orders_* in schema billing are missing in database test; run migrations"
                + " V0_1__inbox_schema, V0_3__schema_revision, V0_4__stored_results (Flyway location L; Liquibase"
                + " change sets inbox-schema-1, inbox-schema-revision-1, inbox-stored-results-1), or build the inbox"
                + " with schema mode CREATE", refused.getMessage());
    }

    @Test
    void validateOfOlderTablesNamesTheMigrationsToRun() {
        InboxStorageException today = assertThrows(InboxStorageException.class,
                () -> SchemaMigrations.validate(rows(SchemaMigrations.INBOX, at(1, 0)), InboxTables.defaults(),
                        "the database file", "M"));
        assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, today.kind());
        assertEquals("the tables inbox_* in the database file are at inbox schema 1.0, older than 1.2 this release"
                + " needs; run migrations V0_3__schema_revision, V0_4__stored_results (M; Liquibase change sets"
                + " inbox-schema-revision-1, inbox-stored-results-1), or build the inbox with schema mode CREATE",
                today.getMessage());

        InboxStorageException oneBehind = assertThrows(InboxStorageException.class,
                () -> SchemaMigrations.validate(rows(SchemaMigrations.INBOX, at(1, 1)), InboxTables.defaults(),
                        "the database file", "M"));
        assertTrue(oneBehind.getMessage().contains("; run migration V0_4__stored_results (M; Liquibase change set"
                + " inbox-stored-results-1)"), oneBehind.getMessage());
    }

    @Test
    void validateRefusesANewerVersionBeforeAnythingElse() {
        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> SchemaMigrations.validate(rows(SchemaMigrations.INBOX, new Recorded(new Level(2, 0), "9.9.0")),
                        ORDERS, "schema billing", "M"));
        assertEquals(InboxStorageException.Kind.NEWER_SCHEMA, refused.kind());
        assertTrue(refused.getMessage().contains("9.9.0"), refused.getMessage());
    }

    @Test
    void aRecordedRowWithoutMinReleaseSaysSo() {
        assertNull(at(1, 0).minRelease());
    }
}
