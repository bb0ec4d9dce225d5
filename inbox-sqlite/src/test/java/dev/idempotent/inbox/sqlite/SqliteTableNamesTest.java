package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import dev.idempotent.inbox.testkit.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Inboxes on tables of their own prefix in one file, and names that are refused before the file is touched. */
class SqliteTableNamesTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final Duration RETENTION = Duration.ofDays(7);

    @TempDir
    Path dir;

    private static long count(Jdbi jdbi, String sql) {
        return jdbi.withHandle(handle -> handle.createQuery(sql).mapTo(Long.class).one());
    }

    @Test
    void twoInboxesOnDifferentPrefixesInOneFileKeepTheirOwnRecordsHorizonsAndSchemaRows() {
        Path file = dir.resolve("shared.db");
        Jdbi jdbi = SqliteInbox.jdbi(file);
        MutableClock clock = new MutableClock(T0);
        try (SqliteInbox orders = SqliteInbox.builder(file).name("receipts").tables(InboxTables.prefix("orders_"))
                        .retention(RETENTION).clock(clock).build();
                SqliteInbox billing = SqliteInbox.builder(file).name("receipts").tables(InboxTables.prefix("billing_"))
                        .retention(RETENTION).clock(clock).build()) {
            // The same inbox name and ids with other content: no conflict across the two sets of tables.
            assertInstanceOf(Outcome.Applied.class, orders.apply("old", Content.of(1), tx -> 1));
            assertInstanceOf(Outcome.Applied.class, billing.apply("old", Content.of(2), tx -> 2));
            clock.advance(RETENTION.plusDays(1));
            assertInstanceOf(Outcome.Applied.class, orders.apply("new", Content.of(3), tx -> 3));
            assertInstanceOf(Outcome.Applied.class, billing.apply("new", Content.of(4), tx -> 4));
            assertInstanceOf(Outcome.Duplicate.class, orders.apply("old", Content.of(1), tx -> 1));
            assertInstanceOf(Outcome.Conflict.class, billing.apply("old", Content.of(1), tx -> 1));

            assertEquals(2, count(jdbi, "SELECT COUNT(*) FROM orders_message"));
            assertEquals(2, count(jdbi, "SELECT COUNT(*) FROM billing_message"));

            PurgeReport purged = orders.retention().purge();
            assertEquals(1, purged.rowsPurged());
            assertTrue(orders.find("old").isEmpty());
            assertTrue(billing.find("old").isPresent(), "the other prefix's record is kept");
            assertEquals(1, count(jdbi, "SELECT COUNT(*) FROM orders_horizon"));
            assertEquals(0, count(jdbi, "SELECT COUNT(*) FROM billing_horizon"), "the other prefix has no horizon");
            assertEquals(2, count(jdbi, "SELECT COUNT(*) FROM billing_message"));
        }
        String known = SchemaMigrations.known(SchemaMigrations.INBOX).toString();
        for (String prefix : List.of("orders_", "billing_")) {
            assertEquals(known, SqliteMigrationTest.level(file, prefix), prefix);
            assertEquals(List.of("index " + prefix + "message_received", "table " + prefix + "horizon",
                    "table " + prefix + "kafka_offset", "table " + prefix + "message", "table " + prefix + "schema"),
                    SqliteMigrationTest.objects(file, prefix).stream().map(s -> s.substring(0, s.indexOf(':')))
                            .sorted().toList());
        }
        assertEquals(List.of(), SqliteMigrationTest.objects(file, "inbox_"), "no table of the default names");
    }

    @Test
    void identifiersThatAreNotPlainAreRefusedByNameWithNothingCreated() {
        Path file = dir.resolve("refused.db");
        SqliteInbox.jdbi(file).useHandle(handle -> handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY)"));
        for (String prefix : List.of("orders'_", "orders;_", "orders _", "x".repeat(InboxTables.MAX_PREFIX_BYTES + 1))) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> SqliteInbox.builder(file).tables(InboxTables.prefix(prefix)).build(), prefix);
            assertTrue(refused.getMessage().contains("table prefix '" + prefix + "'"), refused.getMessage());
        }
        assertEquals(List.of("stock"), SqliteInbox.jdbi(file).withHandle(handle -> handle.createQuery(
                "SELECT name FROM sqlite_master ORDER BY name").mapTo(String.class).list()), "nothing created");
    }

    @Test
    void tablesInASchemaAreRefusedBeforeTheFileIsTouched() {
        Path file = dir.resolve("never.db");

        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> SqliteInbox.builder(file).tables(InboxTables.prefix("orders_").inSchema("billing")).build());

        assertTrue(refused.getMessage().contains("SQLite has no schemas"), refused.getMessage());
        assertTrue(refused.getMessage().contains("'billing'"), refused.getMessage());
        assertFalse(Files.exists(file), "the file was not created");
    }
}
