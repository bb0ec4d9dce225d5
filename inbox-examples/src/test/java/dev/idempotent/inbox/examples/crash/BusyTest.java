package dev.idempotent.inbox.examples.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Item;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Kind;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Reply;
import dev.idempotent.inbox.examples.crash.StockView.Snapshot;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Another connection holds SQLite's write lock ({@code BEGIN IMMEDIATE}) longer than a tiny busy
 * timeout: the message fails with {@link InboxBusyException}, nothing is written and nothing is
 * reported as done; once the lock is released the same message is applied.
 */
class BusyTest {

    static final Duration TINY = Duration.ofMillis(20);

    @TempDir
    Path dir;

    @Test
    void heldWriteLockFailsWithBusyAndTheRetryApplies() {
        Path db = dir.resolve("busy.db");
        Jdbi jdbi = SqliteInbox.jdbi(db);
        jdbi.useHandle(handle -> {
            handle.execute(CrashReceiver.CREATE_STOCK);
            handle.execute(CrashReceiver.SEED_STOCK);
        });
        AtomicInteger effectRuns = new AtomicInteger();
        Effect<Handle, Integer, RuntimeException> addSeven = tx -> {
            effectRuns.incrementAndGet();
            return tx.execute(CrashReceiver.ADD_TO_STOCK, 7);
        };
        try (SqliteInbox inbox = SqliteInbox.builder(jdbi).name(CrashReceiver.INBOX).busyTimeout(TINY).build()) {
            Snapshot whileHeld;
            try (Handle holder = Jdbi.create("jdbc:sqlite:" + db).open()) {
                holder.execute("BEGIN IMMEDIATE");
                assertThrows(InboxBusyException.class, () -> inbox.apply("snack-7", Content.of(7), addSeven));
                whileHeld = StockView.read(db);
                holder.execute("ROLLBACK");
            }
            assertEquals(0, effectRuns.get(), "the effect must not run without the lock");
            assertFalse(whileHeld.has("snack-7"));
            assertEquals(0, whileHeld.total());

            Outcome<Integer> retry = inbox.apply("snack-7", Content.of(7), addSeven);
            Snapshot after = StockView.read(db);
            assertInstanceOf(Outcome.Applied.class, retry);
            assertTrue(after.has("snack-7"));
            assertEquals(7, after.total());
            assertEquals(1, effectRuns.get());
            System.out.printf("[busy] in-process inbox, busy timeout %d ms, write lock held by another connection:"
                            + " 1 attempt -> InboxBusyException, row %s, total %d, effect ran 0 times;"
                            + " after release 1 retry -> Applied, total %d, effect ran %d time%n",
                    TINY.toMillis(), whileHeld.has("snack-7") ? "yes" : "no", whileHeld.total(), after.total(),
                    effectRuns.get());
        }
    }

    @Test
    void receiverProcessReportsBusyAsFailureAndAppliesOnRetry() {
        Path db = dir.resolve("busy-process.db");
        Item item = new Item("snack-8", 8);
        try (ReceiverProcess receiver = ReceiverProcess.start(db, TINY)) {
            Reply busy;
            Snapshot whileHeld;
            try (Handle holder = Jdbi.create("jdbc:sqlite:" + db).open()) {
                holder.execute("BEGIN IMMEDIATE");
                busy = receiver.apply(item);
                whileHeld = StockView.read(db);
                holder.execute("ROLLBACK");
            }
            assertEquals(Kind.FAILED, busy.kind());
            assertEquals(InboxBusyException.class.getSimpleName(), busy.detail());
            assertFalse(busy.kind().accepted(), "a busy failure must never be acknowledged");
            assertFalse(whileHeld.has(item.id()));
            assertEquals(0, whileHeld.total());

            Reply retry = receiver.apply(item);
            receiver.quit();
            Snapshot after = StockView.read(db);
            assertEquals(Kind.APPLIED, retry.kind());
            assertTrue(after.has(item.id()));
            assertEquals(8, after.total());
            System.out.printf("[busy] receiver JVM, busy timeout %d ms, write lock held by the parent's connection:"
                            + " 1 delivery -> %s, accepted=%b, row %s, total %d; after release 1 retry -> %s,"
                            + " total %d%n",
                    TINY.toMillis(), busy, busy.kind().accepted(), whileHeld.has(item.id()) ? "yes" : "no",
                    whileHeld.total(), retry, after.total());
        }
    }
}
