package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import java.nio.file.Path;
import java.util.List;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Attacks on table names and schema steps on SQLite: a user's own table of an inbox's table name. */
class SqliteSchemaAttackTest {

    @TempDir
    Path dir;

    /**
     * The user's own table of messages happens to have the name prefix {@code shop_} gives the
     * inbox's table of records, and columns inbox, id and received_at. Without {@code shop_schema}
     * it is not the inbox's: the first use must refuse it before any DDL, rather than skip creating
     * it, index it and add the result columns to it.
     */
    @Test
    void aUsersOwnTableOfTheNameOfTheInboxsTableIsRefusedWithNothingCreatedOrAltered() {
        Path file = dir.resolve("shop.db");
        Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> handle.execute("CREATE TABLE shop_message (inbox TEXT, id TEXT, received_at INTEGER,"
                + " note TEXT)"));

        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(file).name("warehouse").tables(InboxTables.prefix("shop_")).build());
        assertTrue(refused.getMessage().contains("shop_message"), refused.getMessage());
        assertEquals(List.of("id", "inbox", "note", "received_at"), jdbi.withHandle(handle -> handle.createQuery(
                "SELECT name FROM pragma_table_info('shop_message') ORDER BY name").mapTo(String.class).list()),
                "the user's table was altered");
        assertEquals(List.of("table:shop_message"), jdbi.withHandle(handle -> handle.createQuery(
                "SELECT type || ':' || name FROM sqlite_master ORDER BY name").mapTo(String.class).list()),
                "tables or indexes were created");
    }
}
