package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.examples.crash.StockView;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The warehouse over an inbox built with table names of its own: its stock level counts the rows
 * of that inbox's table, beside a warehouse on the default names in the same database.
 */
class WarehouseTablesTest {

    private static final InboxTables TABLES = InboxTables.prefix("depot_");

    @TempDir
    Path dir;

    @Test
    void aSqliteWarehouseCountsTheRowsOfItsInboxsOwnTable() {
        Path file = dir.resolve("warehouse.db");
        try (Warehouse renamed = SqliteWarehouse.open(file, builder -> builder.tables(TABLES));
                Warehouse plain = SqliteWarehouse.open(file, builder -> builder)) {
            assertInstanceOf(Outcome.Applied.class, renamed.receive("box-1", 3));
            assertInstanceOf(Outcome.Applied.class, renamed.receive("box-2", 4));
            assertInstanceOf(Outcome.Duplicate.class, renamed.receive("box-1", 3));
            assertInstanceOf(Outcome.Applied.class, plain.receive("box-9", 5));

            // One stock row, two inboxes: the total is shared, each counts only its own receipts.
            assertEquals(new StockLevel(12, 2), renamed.stock());
            assertEquals(new StockLevel(12, 1), plain.stock());
        }
        assertEquals(new StockView.Snapshot(12, Set.of("box-1", "box-2")),
                StockView.read(file, SqliteWarehouse.INBOX, TABLES));
        assertEquals(new StockView.Snapshot(12, Set.of("box-9")), StockView.read(file, SqliteWarehouse.INBOX));
    }

    @Test
    void aPostgresWarehouseCountsTheRowsOfItsInboxsOwnTable() {
        try (PostgresSchema schema = PostgresSchema.create("warehouse_tables");
                Warehouse renamed = PostgresWarehouse.open(schema.url(), builder -> builder.tables(TABLES))) {
            assertInstanceOf(Outcome.Applied.class, renamed.receive("box-1", 3));
            assertInstanceOf(Outcome.Duplicate.class, renamed.receive("box-1", 3));

            assertEquals(new StockLevel(3, 1), renamed.stock());
            assertEquals(1, (int) schema.jdbi().withHandle(handle -> handle.createQuery(
                    "SELECT COUNT(*) FROM depot_message").mapTo(Integer.class).one()));
        }
    }
}
