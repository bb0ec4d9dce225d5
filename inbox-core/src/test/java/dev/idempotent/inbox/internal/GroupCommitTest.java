package dev.idempotent.inbox.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.ForwardingInbox;
import dev.idempotent.inbox.testing.InMemoryDatabase;
import dev.idempotent.inbox.testing.InMemoryStore;
import dev.idempotent.inbox.testing.TestInbox;
import java.io.IOException;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Group commit over the in-memory store: callers queued behind a busy writer are committed together,
 * each with its own outcome, and a failure stays with the callers it belongs to.
 *
 * <p>Each scenario first holds the writer with a caller whose effect waits on a latch, queues the
 * callers under test behind it, and waits until the group commit's queue holds all of them, so
 * which callers share a transaction is decided by the test, not by thread scheduling.
 */
class GroupCommitTest {

    private static final long WAIT_SECONDS = 30;

    private final InMemoryDatabase database = new InMemoryDatabase();
    private final ExecutorService callers = Executors.newCachedThreadPool();
    private final CountDownLatch releaseWriter = new CountDownLatch(1);
    private final Map<String, Thread> effectThreads = new ConcurrentHashMap<>();
    private TestInbox inbox = open(Duration.ofSeconds(WAIT_SECONDS), 100);

    @AfterEach
    void close() {
        releaseWriter.countDown();
        callers.shutdownNow();
        inbox.close();
    }

    private TestInbox open(Duration busyTimeout, int maxGroupSize) {
        return TestInbox.builderWithGroupCommit(database)
                .name("warehouse").busyTimeout(busyTimeout).maxGroupSize(maxGroupSize).build();
    }

    private long add(InMemoryStore.Tx tx, String id, long qty) {
        effectThreads.put(id, Thread.currentThread());
        tx.add(id, qty);
        return tx.add("stock", qty);
    }

    /** Starts a caller whose effect holds the writer until {@link #releaseWriter} opens. */
    private Future<Outcome<Long>> holdWriter() throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        Future<Outcome<Long>> blocker = callers.submit(() -> inbox.apply("blocker", Content.of(1), tx -> {
            running.countDown();
            if (!releaseWriter.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new AssertionError("the test never released the writer");
            }
            return add(tx, "blocker", 1);
        }));
        assertTrue(running.await(WAIT_SECONDS, TimeUnit.SECONDS), "the blocker's effect runs");
        return blocker;
    }

    /** Starts {@code count} callers together, each applying {@code item-i} with quantity i. */
    private List<Future<Outcome<Long>>> queueCallers(int count, Map<String, Exception> failures) {
        CyclicBarrier start = new CyclicBarrier(count);
        List<Future<Outcome<Long>>> results = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String id = "item-" + i;
            long qty = i;
            results.add(callers.submit(() -> {
                start.await(WAIT_SECONDS, TimeUnit.SECONDS);
                return inbox.apply(id, Content.of(qty), tx -> {
                    add(tx, id, qty);
                    Exception failure = failures.get(id);
                    if (failure != null) {
                        throw failure; // after its write, which its savepoint must undo
                    }
                    return qty;
                });
            }));
        }
        return results;
    }

    /** Waits until {@code count} requests wait in the inbox's group commit queue. */
    private void awaitQueued(int count) {
        GroupCommit<?> groupCommit = groupCommit(inbox);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (groupCommit.queued() != count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("expected " + count + " queued callers, found " + groupCommit.queued());
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
        }
    }

    /** An adapter's inbox keeps its engine to itself; a renamed field fails here loudly. */
    private static GroupCommit<?> groupCommit(ForwardingInbox<?> inbox) {
        try {
            Object runner = ((InboxEngine<?>) field(ForwardingInbox.class, "delegate").get(inbox)).transactions();
            return assertInstanceOf(GroupCommit.class, runner, "the inbox commits in groups");
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("cannot reach the inbox's group commit", e);
        }
    }

    private static Field field(Class<?> type, String name) throws NoSuchFieldException {
        Field field = type.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }

    private static <T> T get(Future<T> future) throws Exception {
        return future.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    private static Throwable failureOf(Future<?> future) {
        return assertThrows(ExecutionException.class, () -> future.get(WAIT_SECONDS, TimeUnit.SECONDS)).getCause();
    }

    @Test
    void concurrentCallersAreCommittedInFewerTransactionsThanCallersEachWithItsOwnOutcome() throws Exception {
        Future<Outcome<Long>> blocker = holdWriter();
        List<Future<Outcome<Long>>> queued = queueCallers(16, Map.of());
        awaitQueued(16);

        releaseWriter.countDown();

        assertInstanceOf(Outcome.Applied.class, get(blocker));
        for (int i = 0; i < queued.size(); i++) {
            Outcome<Long> appliedOutcome = get(queued.get(i));
            assertInstanceOf(Outcome.Applied.class, appliedOutcome);
            Outcome.Applied<Long> applied = (Outcome.Applied<Long>) appliedOutcome;
            assertEquals("item-" + i, applied.id());
            assertEquals((long) i, applied.result(), "each caller gets its own effect's result");
            assertEquals(i, database.value("item-" + i));
        }
        assertEquals(2, database.commits(), "the blocker's transaction, then one for all sixteen");
        assertTrue(database.commits() < 17);
        assertEquals(1 + 120, database.value("stock"));
        assertEquals(17, database.rows("warehouse"));
        assertEquals(1, effectThreads.entrySet().stream().filter(e -> e.getKey().startsWith("item-"))
                .map(Map.Entry::getValue).distinct().count(), "one writer ran the group");
        assertEquals(17, inbox.stats().applied());
    }

    @Test
    void copiesOfOneIdInOneGroupAreAppliedOnceAndTheOthersAreDuplicates() throws Exception {
        Future<Outcome<Long>> blocker = holdWriter();
        CyclicBarrier start = new CyclicBarrier(8);
        List<Future<Outcome<Long>>> copies = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            copies.add(callers.submit(() -> {
                start.await(WAIT_SECONDS, TimeUnit.SECONDS);
                return inbox.apply("snack-7", Content.of(7), tx -> add(tx, "snack-7", 7));
            }));
        }
        awaitQueued(8);

        releaseWriter.countDown();

        get(blocker);
        List<String> outcomes = new ArrayList<>();
        for (Future<Outcome<Long>> copy : copies) {
            outcomes.add(get(copy).getClass().getSimpleName());
        }
        assertEquals(1, outcomes.stream().filter("Applied"::equals).count(), outcomes.toString());
        assertEquals(7, outcomes.stream().filter("Duplicate"::equals).count(), outcomes.toString());
        assertEquals(1 + 7, database.value("stock"), "the effect ran once");
        assertEquals(2, database.commits());
    }

    @Test
    void callersAreServedInArrivalOrderInGroupsOfAtMostTheGroupSize() throws Exception {
        inbox.close();
        inbox = open(Duration.ofSeconds(WAIT_SECONDS), 4);
        Future<Outcome<Long>> blocker = holdWriter();
        Map<String, Integer> commitsSeenByEffect = new ConcurrentHashMap<>();
        List<Future<Outcome<Long>>> queued = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String id = "item-" + i;
            queued.add(callers.submit(() -> inbox.apply(id, Content.of(1), tx -> {
                commitsSeenByEffect.put(id, database.commits());
                return add(tx, id, 1);
            })));
            awaitQueued(i + 1); // one at a time, so the arrival order is known
        }

        releaseWriter.countDown();

        get(blocker);
        for (Future<Outcome<Long>> result : queued) {
            assertInstanceOf(Outcome.Applied.class, get(result));
        }
        assertEquals(1 + 3, database.commits(), "the blocker, then groups of 4, 4 and 2");
        for (int i = 0; i < 10; i++) {
            assertEquals(1 + i / 4, commitsSeenByEffect.get("item-" + i), "item-" + i + " ran in group " + i / 4);
        }
    }

    @Test
    void failingEffectInAGroupFailsOnlyItsCallerAndTheOthersCommit() throws Exception {
        IllegalStateException unchecked = new IllegalStateException("shelf 3 is broken");
        IOException checked = new IOException("shelf 5 is broken");
        Future<Outcome<Long>> blocker = holdWriter();
        List<Future<Outcome<Long>>> queued = queueCallers(16, Map.of("item-3", unchecked, "item-5", checked));
        awaitQueued(16);

        releaseWriter.countDown();

        get(blocker);
        assertSame(unchecked, failureOf(queued.get(3)), "the effect's own exception, unchanged");
        assertSame(checked, failureOf(queued.get(5)));
        for (int i = 0; i < queued.size(); i++) {
            if (i != 3 && i != 5) {
                assertInstanceOf(Outcome.Applied.class, get(queued.get(i)));
            }
        }
        assertEquals(2, database.commits(), "the failures did not cost the group its commit");
        assertEquals(0, database.value("item-3"), "its write was rolled back with its savepoint");
        assertEquals(0, database.value("item-5"));
        assertEquals(1 + 120 - 3 - 5, database.value("stock"));
        assertTrue(inbox.find("item-3").isEmpty());
        assertTrue(inbox.find("item-5").isEmpty());
        assertEquals(15, inbox.stats().applied());
        assertEquals(2, inbox.stats().failed());
    }

    @Test
    void groupWhoseCommitFailsFailsEveryCallerInItAndRecordsNothing() throws Exception {
        IllegalStateException own = new IllegalStateException("shelf 3 is broken");
        database.failCommitAfter(1); // the blocker's commit succeeds, the group's fails
        Future<Outcome<Long>> blocker = holdWriter();
        List<Future<Outcome<Long>>> queued = queueCallers(16, Map.of("item-3", own));
        awaitQueued(16);

        releaseWriter.countDown();

        assertInstanceOf(Outcome.Applied.class, get(blocker));
        Throwable groupFailure = failureOf(queued.get(0));
        assertInstanceOf(InboxStorageException.class, groupFailure);
        for (int i = 0; i < queued.size(); i++) {
            if (i == 3) {
                assertSame(own, failureOf(queued.get(i)), "a caller that failed on its own keeps its own failure");
            } else {
                assertSame(groupFailure, failureOf(queued.get(i)), "item-" + i);
            }
        }
        assertEquals(1, database.commits());
        assertEquals(1, database.rollbacks());
        assertEquals(1, database.rows("warehouse"), "only the blocker");
        assertEquals(1, database.value("stock"));
        assertEquals(1, inbox.stats().applied());
        assertEquals(16, inbox.stats().failed());
        assertInstanceOf(Outcome.Applied.class, inbox.apply("item-0", Content.of(0), tx -> add(tx, "item-0", 0)),
                "a failed caller applies on retry");
    }

    @Test
    void callerWhoseWorkIsNotTakenWithinTheBusyTimeoutGetsInboxBusyExceptionAndNothingOfItIsApplied()
            throws Exception {
        inbox.close();
        inbox = open(Duration.ofMillis(50), 100);
        Future<Outcome<Long>> blocker = holdWriter();
        AtomicBoolean ran = new AtomicBoolean();

        InboxBusyException busy = assertThrows(InboxBusyException.class,
                () -> inbox.apply("late", Content.of(5), tx -> {
                    ran.set(true);
                    return add(tx, "late", 5);
                }));

        assertEquals(0, groupCommit(inbox).queued(), "its work was withdrawn from the queue");
        releaseWriter.countDown();
        assertInstanceOf(Outcome.Applied.class, get(blocker));
        assertTrue(busy.getMessage().contains("nothing was applied"), busy.getMessage());
        assertFalse(ran.get(), "its effect never ran");
        assertTrue(inbox.find("late").isEmpty());
        assertEquals(1, database.value("stock"));
        assertEquals(1, database.commits(), "no transaction of its own either");
        assertEquals(1, inbox.stats().busy());
        assertInstanceOf(Outcome.Applied.class, inbox.apply("late", Content.of(5), tx -> add(tx, "late", 5)));
    }

    @Test
    void applyFromInsideAnEffectIsRefusedAtOnce() {
        AtomicReference<InboxException> refused = new AtomicReference<>();
        AtomicBoolean innerRan = new AtomicBoolean();

        Outcome<Long> outer = inbox.apply("outer", Content.of(1), tx -> {
            try {
                inbox.apply("inner", Content.of(2), innerTx -> {
                    innerRan.set(true);
                    return add(innerTx, "inner", 2);
                });
            } catch (InboxException e) {
                refused.set(e);
            }
            return add(tx, "outer", 1);
        });

        assertInstanceOf(Outcome.Applied.class, outer);
        // Not InboxBusyException: with a 30 second busy timeout, that would have meant waiting for itself.
        assertEquals(InboxException.class, refused.get().getClass());
        assertTrue(refused.get().getMessage().contains("inside an effect"), refused.get().getMessage());
        assertFalse(innerRan.get());
        assertTrue(inbox.find("inner").isEmpty());
        assertEquals(1, database.begins(), "only the outer call's transaction");
        assertEquals(0, groupCommit(inbox).queued());
    }

    @Test
    void loneCallerRunsItsEffectOnItsOwnThread() {
        inbox.apply("alone", Content.of(1), tx -> add(tx, "alone", 1));

        assertSame(Thread.currentThread(), effectThreads.get("alone"));
        assertEquals(1, database.commits());
    }
}
