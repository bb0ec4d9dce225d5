package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.ContentStorage;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxStorageException.Kind;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/** What only SQLite has: files, pragmas, and the ways a file can refuse to be an inbox. */
class SqliteInboxTest {

    @TempDir
    Path directory;

    private Path file() {
        return directory.resolve("inbox.db");
    }

    private static Jdbi jdbi(Path file, SQLiteConfig config) {
        SQLiteDataSource dataSource = new SQLiteDataSource(config);
        dataSource.setUrl("jdbc:sqlite:" + file);
        return Jdbi.create(dataSource);
    }

    private static long rows(Path file) {
        return SqliteInbox.jdbi(file).withHandle(handle ->
                handle.createQuery("SELECT COUNT(*) FROM inbox_message").mapTo(Long.class).one());
    }

    @Test
    void fileIsInWalModeAndTheInboxConnectionSyncsFully() {
        try (SqliteInbox inbox = SqliteInbox.builder(file()).build()) {
            int synchronous = inbox.apply("snack-7", Content.of(7),
                    tx -> tx.createQuery("PRAGMA synchronous").mapTo(Integer.class).one()).fold(
                            applied -> applied.result(), duplicate -> -1, conflict -> -1);
            String mode = inbox.jdbi().withHandle(handle ->
                    handle.createQuery("PRAGMA journal_mode").mapTo(String.class).one());

            assertEquals(2, synchronous, "synchronous=FULL");
            assertEquals("wal", mode);
        }
    }

    @Test
    void effectsGetTheGeneratedKeysOfTheirOwnInsertsAsTheConnectionPromises() {
        try (SqliteInbox inbox = SqliteInbox.builder(file()).build()) {
            inbox.jdbi().useHandle(handle -> handle.execute(
                    "CREATE TABLE shipment (number INTEGER PRIMARY KEY, item TEXT NOT NULL)"));
            List<Long> numbers = new ArrayList<>();
            for (String id : List.of("snack-7", "snack-8")) {
                // The inbox's own claim skips the driver's generated-key query; the effect's insert must not.
                numbers.add(inbox.apply(id, Content.of(7), tx -> tx
                        .createUpdate("INSERT INTO shipment (item) VALUES ('crisps')")
                        .executeAndReturnGeneratedKeys("number")
                        .mapTo(Long.class)
                        .one()).fold(applied -> applied.result(), duplicate -> -1L, conflict -> -1L));
            }
            assertEquals(List.of(1L, 2L), numbers);
        }
    }

    @Test
    void committedPagesReachTheDatabaseFileWithoutTheWriterCopyingThem() throws Exception {
        long checkpointThreads = checkpointThreads();
        try (SqliteInbox inbox = SqliteInbox.builder(file()).build()) {
            assertEquals(checkpointThreads + 1, checkpointThreads());
            long sizeBefore = Files.size(file());
            long threshold = inbox.apply("snack-0", Content.of(0),
                    tx -> tx.createQuery("PRAGMA wal_autocheckpoint").mapTo(Long.class).one())
                    .fold(applied -> applied.result(), duplicate -> -1L, conflict -> -1L);
            for (int i = 1; i < 300; i++) {
                inbox.apply("snack-" + i, Content.of(i), tx -> 0);
            }

            // 300 small commits log far fewer pages than the writer's threshold, so only the
            // background checkpoint can have copied them into the database file.
            assertEquals(WalCheckpointer.WRITER_THRESHOLD_PAGES, threshold);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (Files.size(file()) <= sizeBefore) {
                assertTrue(System.nanoTime() < deadline, "no page reached the database file in 10 s");
                Thread.sleep(20);
            }
        }
        assertEquals(checkpointThreads, checkpointThreads(), "close stops the checkpoint thread");
    }

    private static long checkpointThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().equals("inbox-checkpoint") && thread.isAlive())
                .count();
    }

    @Test
    void schemaIsCreatedOnFirstUseWithItsVersion() {
        SqliteInbox.builder(file()).build().close();

        String level = SqliteInbox.jdbi(file()).withHandle(handle -> handle
                .createQuery("SELECT version || '.' || revision FROM inbox_schema WHERE component = 'inbox'")
                .mapTo(String.class).one());
        assertEquals(SchemaMigrations.known(SchemaMigrations.INBOX).toString(), level);
        assertEquals(0, rows(file()));
    }

    @Test
    void fileWrittenByANewerSchemaIsRefused() {
        SqliteInbox.builder(file()).build().close();
        SqliteInbox.jdbi(file()).useHandle(handle ->
                handle.execute("UPDATE inbox_schema SET version = 99 WHERE component = 'inbox'"));

        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> SqliteInbox.builder(file()).build());

        assertEquals(Kind.NEWER_SCHEMA, refused.kind());
        assertTrue(refused.getMessage().contains("99"), refused.getMessage());
    }

    @Test
    void fingerprintOfAnUnknownNewerEncodingIsRefusedNotCalledAConflict() {
        try (SqliteInbox inbox = SqliteInbox.builder(file()).build()) {
            inbox.apply("snack-7", Content.of(7), tx -> null);
            inbox.jdbi().useHandle(handle -> handle.execute("UPDATE inbox_message SET fingerprint_algorithm = 99"));

            InboxStorageException refused = assertThrows(InboxStorageException.class,
                    () -> inbox.apply("snack-7", Content.of(7), tx -> null));

            assertEquals(Kind.NEWER_SCHEMA, refused.kind());
            assertEquals(1, inbox.stats().failed());
        }
    }

    @Test
    void corruptFileIsRefusedAndLeftAsItWas() throws Exception {
        byte[] garbage = "this is not a database, it is a shopping list: snacks, more snacks".repeat(100).getBytes();
        Files.write(file(), garbage);

        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> SqliteInbox.builder(file()).build());

        assertEquals(Kind.CORRUPT, refused.kind());
        assertArrayEquals(garbage, Files.readAllBytes(file()));
    }

    @Test
    void readOnlyDatabaseIsRefusedAndLeftAsItWas() {
        try (SqliteInbox inbox = SqliteInbox.builder(file()).build()) {
            inbox.apply("snack-7", Content.of(7), tx -> null);
        }
        SQLiteConfig readOnly = new SQLiteConfig();
        readOnly.setReadOnly(true);

        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(jdbi(file(), readOnly)).build());

        assertEquals(Kind.READ_ONLY, refused.kind());
        assertEquals(1, rows(file()));
    }

    @Test
    void inMemoryDatabaseIsRefusedBecauseItCannotBeDurable() {
        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> SqliteInbox.builder(Jdbi.create("jdbc:sqlite::memory:")).build());

        assertTrue(refused.getMessage().contains("WAL"), refused.getMessage());
    }

    @Test
    void fullDatabaseIsStorageFailureAndAppliesNothing() {
        SqliteInbox.builder(file()).build().close();
        SQLiteConfig small = new SQLiteConfig();
        small.setMaxPageCount(16);
        Jdbi jdbi = jdbi(file(), small);
        try (SqliteInbox inbox = SqliteInbox.builder(jdbi).contentStorage(ContentStorage.FULL_CONTENT).build()) {
            InboxStorageException refused = assertThrows(InboxStorageException.class,
                    () -> inbox.apply("big-1", Content.ofBytes(new byte[512 * 1024]), tx -> null));

            assertEquals(Kind.DISK_FULL, refused.kind());
            assertInstanceOf(Outcome.Applied.class, inbox.apply("small-1", Content.of(1), tx -> null),
                    "the inbox keeps working once the write fits");
        }
        assertEquals(1, rows(file()));
    }

    @Test
    void applyFromInsideAnEffectOfTheSameInboxIsRefused() {
        try (SqliteInbox inbox = SqliteInbox.builder(file()).build()) {
            InboxException refused = assertThrows(InboxException.class, () -> inbox.apply("outer", Content.of(1),
                    tx -> inbox.apply("inner", Content.of(2), inner -> null)));

            assertTrue(refused.getMessage().contains("inside an effect"), refused.getMessage());
            assertEquals(0, rows(file()));
            assertInstanceOf(Outcome.Applied.class, inbox.apply("outer", Content.of(1), tx -> null));
        }
    }

    @Test
    void effectThatOpensItsOwnTransactionIsRefusedAndTheInboxRecovers() {
        try (SqliteInbox inbox = SqliteInbox.builder(file()).build()) {
            assertThrows(RuntimeException.class, () -> inbox.apply("snack-7", Content.of(7),
                    tx -> tx.inTransaction(nested -> nested.execute("SELECT 1"))));

            assertEquals(0, rows(file()));
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> null));
            assertEquals(1, rows(file()));
        }
    }

    @Test
    void effectStatementsKeptForTheNextMessageStayCorrectAfterFailuresAndRollbacks() {
        try (SqliteInbox inbox = SqliteInbox.builder(file()).build()) {
            inbox.jdbi().useHandle(handle -> handle.execute("CREATE TABLE shelf (slot INTEGER PRIMARY KEY, qty INTEGER)"));
            for (int i = 0; i < 50; i++) {
                int slot = i % 10; // slots repeat: every tenth message breaks the primary key
                String id = "m-" + i;
                Content content = Content.of(i);
                if (i >= 10) {
                    assertThrows(RuntimeException.class, () -> inbox.apply(id, content,
                            tx -> tx.execute("INSERT INTO shelf VALUES (?, ?)", slot, 1)));
                } else {
                    inbox.apply(id, content, tx -> tx.execute("INSERT INTO shelf VALUES (?, ?)", slot, 1));
                }
                int seen = inbox.apply("read-" + i, Content.of(i), tx -> tx.createQuery("SELECT COUNT(*) FROM shelf WHERE slot = ?")
                        .bind(0, slot).mapTo(Integer.class).one()).fold(applied -> applied.result(), d -> -1, c -> -1);
                assertEquals(1, seen, "the reused query sees this message's parameter, not a previous one's");
            }
            long shelf = inbox.jdbi().withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM shelf").mapTo(Long.class).one());
            assertEquals(10, shelf);
            assertEquals(10 + 50, rows(file()), "the failed inserts left no inbox rows");
        }
    }

    @Test
    void writerWaitsForAnotherProcessStyleConnectionAndThenApplies() throws Exception {
        try (SqliteInbox inbox = SqliteInbox.builder(file()).build()) {
            Jdbi other = SqliteInbox.jdbi(file());
            var handle = other.open();
            handle.execute("BEGIN IMMEDIATE");
            var result = new java.util.concurrent.CompletableFuture<Outcome<Object>>();
            Thread applier = new Thread(() -> result.complete(inbox.apply("snack-7", Content.of(7), tx -> null)));
            applier.start();
            // The applier is blocked on the file lock until the other connection commits.
            handle.execute("COMMIT");
            handle.close();
            assertInstanceOf(Outcome.Applied.class, result.get(30, java.util.concurrent.TimeUnit.SECONDS));
        }
    }
}
