package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.testkit.GroupCommitProbe;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fair single writer: concurrent callers committed in groups, and batches in one transaction. */
class GroupCommitTest {

    @TempDir
    Path directory;

    private Jdbi jdbi;
    private SqliteInbox inbox;
    private final ExecutorService callers = Executors.newCachedThreadPool();
    private final Map<String, Thread> effectThreads = new ConcurrentHashMap<>();

    @BeforeEach
    void open() {
        Path file = directory.resolve("warehouse.db");
        jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> {
            handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
            handle.execute("INSERT INTO stock VALUES (1, 0)");
        });
        inbox = SqliteInbox.builder(jdbi).name("warehouse").build();
    }

    @AfterEach
    void close() {
        callers.shutdownNow();
        inbox.close();
    }

    private Integer add(Handle tx, String id, long qty) {
        effectThreads.put(id, Thread.currentThread());
        return tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty);
    }

    private long total() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
    }

    private long rows() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM inbox_message").mapTo(Long.class).one());
    }

    /** Starts a caller whose effect blocks the writer until {@code release} opens. */
    private Future<Outcome<Integer>> blockWriter(CountDownLatch running, CountDownLatch release) {
        return callers.submit(() -> inbox.apply("blocker", Content.of(1), tx -> {
            running.countDown();
            release.await();
            return add(tx, "blocker", 1);
        }));
    }

    /** Waits until {@code count} callers are queued behind the writer, polling the group commit's queue. */
    private void awaitQueued(int count) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (GroupCommitProbe.queued(inbox) != count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("expected " + count + " queued callers, found " + GroupCommitProbe.queued(inbox));
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private List<Future<Outcome<Integer>>> queueCallers(int count, String failingId, RuntimeException failure)
            throws InterruptedException {
        List<Future<Outcome<Integer>>> results = new ArrayList<>();
        CountDownLatch started = new CountDownLatch(count);
        for (int i = 0; i < count; i++) {
            String id = "item-" + i;
            results.add(callers.submit(() -> {
                started.countDown();
                return inbox.apply(id, Content.of(10), tx -> {
                    if (id.equals(failingId)) {
                        add(tx, id, 10); // written, then rolled back with its savepoint
                        throw failure;
                    }
                    return add(tx, id, 10);
                });
            }));
        }
        started.await();
        return results;
    }

    @Test
    void queuedCallersAreCommittedTogetherByOneWriter() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome<Integer>> blocker = blockWriter(running, release);
        running.await();
        List<Future<Outcome<Integer>>> queued = queueCallers(7, null, null);
        awaitQueued(7);

        release.countDown();

        assertInstanceOf(Outcome.Applied.class, blocker.get(30, TimeUnit.SECONDS));
        for (Future<Outcome<Integer>> result : queued) {
            assertInstanceOf(Outcome.Applied.class, result.get(30, TimeUnit.SECONDS));
        }
        long writers = effectThreads.entrySet().stream()
                .filter(e -> e.getKey().startsWith("item-")).map(Map.Entry::getValue).distinct().count();
        assertEquals(1, writers, "the seven queued messages ran in one group, on one thread");
        assertEquals(71, total());
        assertEquals(8, rows());
    }

    @Test
    void failingEffectInAGroupRollsBackOnlyItsOwnMessageAndOnlyItsCallerSeesIt() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome<Integer>> blocker = blockWriter(running, release);
        running.await();
        IllegalStateException failure = new IllegalStateException("shelf 3 is broken");
        List<Future<Outcome<Integer>>> queued = queueCallers(7, "item-3", failure);
        awaitQueued(7);

        release.countDown();

        blocker.get(30, TimeUnit.SECONDS);
        for (int i = 0; i < queued.size(); i++) {
            if (i == 3) {
                ExecutionException thrown = assertThrows(ExecutionException.class, queued.get(i)::get);
                assertSame(failure, thrown.getCause(), "the effect's own exception, unchanged");
            } else {
                assertInstanceOf(Outcome.Applied.class, queued.get(i).get(30, TimeUnit.SECONDS));
            }
        }
        assertEquals(1 + 6 * 10, total());
        assertEquals(7, rows());
        assertTrue(inbox.find("item-3").isEmpty());
        assertInstanceOf(Outcome.Applied.class, inbox.apply("item-3", Content.of(10), tx -> add(tx, "item-3", 10)),
                "the failed message applies on retry");
    }

    @Test
    void callerNotServedWithinTheBusyTimeoutGivesUpAndNothingIsApplied() throws Exception {
        inbox.close();
        inbox = SqliteInbox.builder(jdbi).name("warehouse").busyTimeout(Duration.ofMillis(200)).build();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome<Integer>> blocker = blockWriter(running, release);
        running.await();

        InboxBusyException busy = assertThrows(InboxBusyException.class,
                () -> inbox.apply("late", Content.of(5), tx -> add(tx, "late", 5)));

        release.countDown();
        assertInstanceOf(Outcome.Applied.class, blocker.get(30, TimeUnit.SECONDS));
        assertTrue(busy.getMessage().contains("nothing was applied"), busy.getMessage());
        assertTrue(inbox.find("late").isEmpty());
        assertEquals(1, total());
        assertInstanceOf(Outcome.Applied.class, inbox.apply("late", Content.of(5), tx -> add(tx, "late", 5)));
        assertEquals(1, inbox.stats().busy());
    }

    @Test
    void applyAllJudgesEveryMessageInOneTransactionAndIsolatesFailures() {
        inbox.apply("old", Content.of(3), tx -> add(tx, "old", 3));
        IllegalStateException failure = new IllegalStateException("no room");
        List<Message> batch = List.of(
                Message.of("a", Content.of(1)),
                Message.of("b", Content.of(2)),
                Message.of("a", Content.of(1)), // repeated within the batch: duplicate of the first
                Message.of("old", Content.of(3)), // applied before: duplicate
                Message.of("old", Content.of(4)), // conflict
                Message.of("bad\nid", Content.of(5)), // invalid
                Message.of("boom", Content.of(6)), // its effect throws
                Message.of("c", Content.of(7)));

        List<MessageResult<Integer>> results = inbox.applyAll(batch, (tx, message) -> {
            if (message.id().equals("boom")) {
                add(tx, "boom", 6);
                throw failure;
            }
            return add(tx, message.id(), java.nio.ByteBuffer.wrap(message.content().bytes()).getLong());
        });

        assertEquals(batch.size(), results.size());
        assertInstanceOf(Outcome.Applied.class, results.get(0).outcome().orElseThrow());
        assertInstanceOf(Outcome.Applied.class, results.get(1).outcome().orElseThrow());
        assertInstanceOf(Outcome.Duplicate.class, results.get(2).outcome().orElseThrow());
        assertInstanceOf(Outcome.Duplicate.class, results.get(3).outcome().orElseThrow());
        assertInstanceOf(Outcome.Conflict.class, results.get(4).outcome().orElseThrow());
        assertInstanceOf(InvalidMessageException.class, results.get(5).failure().orElseThrow());
        assertSame(failure, results.get(6).failure().orElseThrow());
        assertInstanceOf(Outcome.Applied.class, results.get(7).outcome().orElseThrow());
        assertEquals(List.of(true, true, true, true, false, false, false, true),
                results.stream().map(MessageResult::isAccepted).toList());

        assertEquals(3 + 1 + 2 + 7, total(), "boom's write was rolled back with its savepoint");
        assertEquals(4, rows(), "old, a, b, c");
        assertTrue(inbox.find("boom").isEmpty());
        var stats = inbox.stats();
        assertEquals(List.of(4L, 2L, 1L, 1L, 1L), List.of(stats.applied(), stats.duplicates(), stats.conflicts(),
                stats.invalid(), stats.failed()));
        assertEquals(9, stats.attempts());
    }

    @Test
    void applyAllOfAThousandCommitsOnceAndCountsEachMessage() {
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            batch.add(Message.of("m-" + i, Content.of(1)));
        }

        List<MessageResult<Integer>> results = inbox.applyAll(batch, (tx, message) -> add(tx, message.id(), 1));

        assertTrue(results.stream().allMatch(result -> result.outcome().orElseThrow().isNewlyApplied()));
        assertEquals(1000, total());
        assertEquals(1000, inbox.stats().applied());
        assertTrue(inbox.applyAll(batch, (tx, message) -> add(tx, message.id(), 1)).stream()
                .allMatch(result -> result.outcome().orElseThrow() instanceof Outcome.Duplicate));
        assertEquals(1000, total());
    }
}
