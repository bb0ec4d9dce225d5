package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.ContentStorage;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.testkit.Stock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleListener;
import org.jdbi.v3.core.Handles;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Faults of the SQLite file while an inbox has it open: the database full, the file made
 * read-only, a checkpoint starved by a long reader. Each fault gives typed errors and records
 * nothing without its effect; once the fault is gone the same inbox applies again, and every
 * message retried until accepted counts exactly once.
 */
class SqliteFaultTest {

    private static final int PAYLOAD = 2_000;

    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve("inbox.db");
    }

    /** Outcomes and failures by kind, for the summary line. */
    private final Map<String, Integer> seen = new TreeMap<>();

    /** Applies {@code id} once; true when applied, false when refused with a storage failure. */
    private boolean tryApply(SqliteInbox inbox, Stock stock, String id, int qty) {
        try {
            Outcome<Integer> outcome = inbox.apply(id, payload(qty), tx -> stock.add(tx, qty));
            assertTrue(outcome instanceof Outcome.Applied<?>, id + ": " + outcome);
            seen.merge("Applied", 1, Integer::sum);
            return true;
        } catch (InboxStorageException e) {
            seen.merge("InboxStorageException." + e.kind(), 1, Integer::sum);
            return false;
        } catch (OutcomeUnknownException e) {
            seen.merge("OutcomeUnknownException", 1, Integer::sum);
            unknown.add(id);
            return false;
        }
    }

    /** Ids whose outcome the caller did not hear: they may or may not have committed. */
    private final List<String> unknown = new ArrayList<>();

    /**
     * Retries, once the fault is gone, a message that was not applied: Duplicate exactly when the
     * file holds it (an unknown outcome that committed), Applied otherwise.
     */
    private void retry(SqliteInbox inbox, Jdbi independent, Stock stock, String id, int qty, Map<String, Integer> applied) {
        boolean committed = independent.withHandle(h -> h.createQuery(
                "SELECT count(*) FROM inbox_message WHERE inbox = 'warehouse' AND id = ?").bind(0, id).mapTo(Long.class).one()) == 1;
        assertTrue(!committed || unknown.contains(id), id + " was refused with a definite failure, yet the file holds it");
        Outcome<Integer> outcome = inbox.apply(id, payload(qty), tx -> stock.add(tx, qty));
        if (committed) {
            assertTrue(outcome instanceof Outcome.Duplicate<?>, id + " committed, so its retry is Duplicate: " + outcome);
            seen.merge("retry Duplicate", 1, Integer::sum);
        } else {
            assertTrue(outcome instanceof Outcome.Applied<?>, id + " did not commit, so its retry is Applied: " + outcome);
            seen.merge("retry Applied", 1, Integer::sum);
        }
        applied.put(id, qty);
    }

    /** Big enough that each message needs pages of its own. */
    private static Content payload(int qty) {
        byte[] bytes = new byte[PAYLOAD];
        bytes[0] = (byte) qty;
        bytes[1] = (byte) (qty >> 8);
        return Content.ofBytes(bytes);
    }

    /** What the file holds, through a connection of its own, matches what the callers heard. */
    private static void assertFileHolds(Jdbi independent, Stock stock, Map<String, Integer> applied) {
        long rows = Stock.inboxRows(independent, "warehouse");
        assertEquals(applied.size(), rows, "one row per applied id, and none for a refused one");
        assertEquals(applied.values().stream().mapToLong(Integer::longValue).sum(), stock.total(),
                "the total holds each applied quantity once, and no refused one");
    }

    @ParameterizedTest
    @EnumSource(value = CommitMode.class, names = {"GROUP", "PER_CALLER"})
    void databaseFullMidRunRefusesWithDiskFullAndRecordsNothingUntilThereIsRoom(CommitMode mode) {
        // Every connection the inbox opens gets the current page limit when it opens, and the
        // ones open already get it between two calls: the writer, and the checkpoint connection.
        AtomicReference<String> pageLimit = new AtomicReference<>();
        List<Handle> handles = new java.util.concurrent.CopyOnWriteArrayList<>();
        Jdbi jdbi = SqliteInbox.jdbi(file());
        jdbi.getConfig(Handles.class).addListener(new HandleListener() {
            @Override
            public void handleCreated(Handle handle) {
                handles.add(handle);
                String limit = pageLimit.get();
                if (limit != null) {
                    handle.execute("PRAGMA max_page_count = " + limit);
                }
            }
        });
        Stock stock = Stock.create(jdbi, "warehouse");
        Jdbi independent = SqliteInbox.jdbi(file());
        Map<String, Integer> applied = new LinkedHashMap<>();
        List<String> refused = new ArrayList<>();
        try (SqliteInbox inbox = SqliteInbox.builder(jdbi).name("warehouse").commitMode(mode).contentStorage(ContentStorage.FULL_CONTENT).build()) {
            for (int i = 0; i < 10; i++) {
                String id = "before-" + i;
                assertTrue(tryApply(inbox, stock, id, i + 1));
                applied.put(id, i + 1);
            }
            long pages = independent.withHandle(h -> h.createQuery("PRAGMA page_count").mapTo(Long.class).one());
            pageLimit.set(Long.toString(pages));
            limitOpen(handles, pages);

            int diskFull = 0;
            for (int i = 0; i < 10; i++) {
                String id = "full-" + i;
                if (tryApply(inbox, stock, id, 100 + i)) {
                    applied.put(id, 100 + i); // it fitted into free space of a page
                } else {
                    refused.add(id);
                    diskFull++;
                }
                assertFileHolds(independent, stock, applied);
            }
            // A batch while full: all of it or nothing of it, each message with its effect.
            List<Message> batch = List.of(Message.of("batch-0", payload(1000)), Message.of("batch-1", payload(1001)));
            try {
                for (MessageResult<Integer> result : inbox.applyAll(batch, (tx, m) -> stock.add(tx, m.id().equals("batch-0") ? 1000 : 1001))) {
                    if (result.outcome().isPresent()) {
                        applied.put(result.message().id(), result.message().id().equals("batch-0") ? 1000 : 1001);
                    } else {
                        refused.add(result.message().id());
                    }
                }
            } catch (InboxStorageException e) {
                seen.merge("applyAll InboxStorageException." + e.kind(), 1, Integer::sum);
                assertEquals(InboxStorageException.Kind.DISK_FULL, e.kind());
                batch.forEach(m -> refused.add(m.id()));
            }
            assertFileHolds(independent, stock, applied);
            assertTrue(diskFull > 0, "the lowered limit made writes fail: " + seen);
            assertFalse(seen.keySet().stream().anyMatch(k -> k.startsWith("InboxStorageException.") && !k.endsWith("DISK_FULL")),
                    "a full database is DISK_FULL: " + seen);

            // Room again: the same inbox applies every refused message, once.
            pageLimit.set(null);
            limitOpen(handles, 1_073_741_823);
            for (String id : refused) {
                int qty = id.startsWith("batch-") ? 1000 + Integer.parseInt(id.substring(6)) : 100 + Integer.parseInt(id.substring(5));
                retry(inbox, independent, stock, id, qty, applied);
            }
            assertFileHolds(independent, stock, applied);
        }
        System.out.printf("[sqlite-fault] database full (%s): messages=%d refused while full=%d outcomes=%s lost=0 doubled=0%n",
                mode, applied.size(), refused.size(), seen);
    }

    private static void limitOpen(List<Handle> handles, long pages) {
        for (Handle handle : handles) {
            if (!handle.isClosed()) {
                handle.execute("PRAGMA max_page_count = " + pages);
            }
        }
    }

    @Test
    void fileMadeReadOnlyWhileOpenFailsTypedAndRecordsNothingUntilWritableAgain() throws Exception {
        Jdbi jdbi = SqliteInbox.jdbi(file());
        Stock stock = Stock.create(jdbi, "warehouse");
        Jdbi independent = SqliteInbox.jdbi(file());
        Map<String, Integer> applied = new LinkedHashMap<>();
        List<String> refused = new ArrayList<>();
        try (SqliteInbox inbox = SqliteInbox.builder(jdbi).name("warehouse").contentStorage(ContentStorage.FULL_CONTENT).build()) {
            for (int i = 0; i < 5; i++) {
                assertTrue(tryApply(inbox, stock, "before-" + i, i + 1));
                applied.put("before-" + i, i + 1);
            }
            try (Immutable readOnly = Immutable.make(file(), dir.resolve("inbox.db-wal"))) {
                for (int i = 0; i < 5; i++) {
                    String id = "read-only-" + i;
                    assertFalse(tryApply(inbox, stock, id, 10 + i), id + " cannot be written to a read-only file");
                    refused.add(id);
                }
                assertTrue(inbox.find("before-0").isPresent(), "reading goes on while the file is read-only");
            }
            for (int i = 0; i < refused.size(); i++) {
                retry(inbox, independent, stock, refused.get(i), 10 + i, applied);
            }
            assertFileHolds(independent, stock, applied);
        }
        assertFalse(seen.containsKey("InboxStorageException.DISK_FULL"), "not a full disk: " + seen);
        System.out.printf("[sqlite-fault] file read-only while open: messages=%d refused while read-only=%d outcomes=%s"
                + " lost=0 doubled=0%n", applied.size(), refused.size(), seen);
    }

    @Test
    void checkpointStarvedByALongReaderStopsNoWriterAndCatchesUpAfterIt() {
        Jdbi jdbi = SqliteInbox.jdbi(file());
        Stock stock = Stock.create(jdbi, "warehouse");
        Jdbi independent = SqliteInbox.jdbi(file());
        Map<String, Integer> applied = new LinkedHashMap<>();
        long[] starved;
        try (SqliteInbox inbox = SqliteInbox.builder(jdbi).name("warehouse").contentStorage(ContentStorage.FULL_CONTENT).build()) {
            assertTrue(tryApply(inbox, stock, "before", 1));
            applied.put("before", 1);
            try (Handle reader = independent.open()) {
                reader.begin();
                long readerRows = reader.createQuery("SELECT count(*) FROM inbox_message").mapTo(Long.class).one();
                assertEquals(1, readerRows);
                for (int i = 0; i < 300; i++) {
                    assertTrue(tryApply(inbox, stock, "during-" + i, 2 + i), "writers go on while the checkpoint starves");
                    applied.put("during-" + i, 2 + i);
                }
                starved = checkpoint(independent);
                assertTrue(starved[2] < starved[1], "the reader's snapshot holds frames in the log: checkpointed "
                        + starved[2] + " of " + starved[1]);
                assertEquals(1, reader.createQuery("SELECT count(*) FROM inbox_message").mapTo(Long.class).one(),
                        "the long reader still sees its snapshot");
                reader.rollback();
            }
            long[] caughtUp = checkpoint(independent);
            assertEquals(0, caughtUp[0], "no reader holds the log any more");
            assertEquals(caughtUp[1], caughtUp[2], "every frame of the log is back in the database file");
            assertTrue(tryApply(inbox, stock, "after", 1_000));
            applied.put("after", 1_000);
            assertFileHolds(independent, stock, applied);
        }
        System.out.printf("[sqlite-fault] checkpoint starved by a long reader: messages=%d while starved: log=%d frames,"
                + " checkpointed=%d; after the reader: all frames checkpointed; outcomes=%s lost=0 doubled=0%n",
                applied.size(), starved[1], starved[2], seen);
    }

    /** {@code PRAGMA wal_checkpoint(PASSIVE)}: busy, frames in the log, frames checkpointed. */
    private static long[] checkpoint(Jdbi jdbi) {
        return jdbi.withHandle(h -> h.createQuery("PRAGMA wal_checkpoint(PASSIVE)")
                .map((rs, ctx) -> new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)})
                .one());
    }

    /**
     * Files made immutable with {@code chattr +i} while SQLite has them open: writes through the
     * open descriptors then fail (EPERM), which permission bits cannot do for a file already
     * open, nor for root. {@link #close()} takes the attribute away again.
     */
    private static final class Immutable implements AutoCloseable {
        private final List<Path> files;

        private Immutable(List<Path> files) {
            this.files = files;
        }

        static Immutable make(Path... files) throws IOException, InterruptedException {
            List<Path> made = new ArrayList<>();
            Immutable immutable = new Immutable(made);
            for (Path file : files) {
                assertTrue(Files.exists(file), file + " exists");
                boolean ok;
                try {
                    ok = new ProcessBuilder("chattr", "+i", file.toString()).inheritIO().start().waitFor() == 0;
                } catch (IOException e) {
                    ok = false;
                }
                if (!ok) {
                    immutable.close();
                    Assumptions.abort("cannot make " + file + " immutable here (chattr needs root on ext4 and the like)");
                }
                made.add(file);
            }
            return immutable;
        }

        @Override
        public void close() throws IOException, InterruptedException {
            for (Path file : files) {
                if (new ProcessBuilder("chattr", "-i", file.toString()).inheritIO().start().waitFor() != 0) {
                    fail("could not make " + file + " writable again");
                }
            }
        }
    }
}
