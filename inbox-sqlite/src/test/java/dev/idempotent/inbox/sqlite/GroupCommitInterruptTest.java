package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.testkit.GroupCommitProbe;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An interrupt under group commit concerns only the caller whose thread was interrupted. */
class GroupCommitInterruptTest {

    private static final long WAIT_SECONDS = 30;

    @TempDir
    Path directory;

    private Jdbi jdbi;
    private SqliteInbox inbox;
    private final CountDownLatch blockerRunning = new CountDownLatch(1);
    private final CountDownLatch releaseBlocker = new CountDownLatch(1);
    private final List<Caller> callers = new ArrayList<>();

    @BeforeEach
    void open() {
        jdbi = SqliteInbox.jdbi(directory.resolve("warehouse.db"));
        jdbi.useHandle(handle -> {
            handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
            handle.execute("INSERT INTO stock VALUES (1, 0)");
        });
        // Far beyond any wait of these tests: only an interrupt can make a queued caller leave early.
        inbox = SqliteInbox.builder(jdbi).name("warehouse").busyTimeout(Duration.ofMinutes(10)).build();
    }

    @AfterEach
    void close() throws InterruptedException {
        releaseBlocker.countDown();
        for (Caller caller : callers) {
            caller.thread.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        }
        inbox.close();
    }

    private static Integer add(Handle tx, long qty) {
        return tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty);
    }

    private long total() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
    }

    private long rows() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM inbox_message").mapTo(Long.class).one());
    }

    /** Holds the writer with an effect blocked until {@link #releaseBlocker} opens. */
    private Caller blockWriter() throws InterruptedException {
        Caller blocker = start("blocker", tx -> {
            blockerRunning.countDown();
            releaseBlocker.await();
            return add(tx, 1);
        });
        assertTrue(blockerRunning.await(WAIT_SECONDS, TimeUnit.SECONDS), "the blocker's effect did not run");
        return blocker;
    }

    private Caller start(String id, Effect<Handle, Integer, Exception> effect) {
        Caller caller = new Caller(id, effect, false);
        callers.add(caller);
        caller.thread.start();
        return caller;
    }

    /** Starts a caller and waits until its request is queued, so callers queue in the order started. */
    private Caller queue(String id, Effect<Handle, Integer, Exception> effect) {
        int before = GroupCommitProbe.queued(inbox);
        Caller caller = start(id, effect);
        awaitQueued(before + 1);
        return caller;
    }

    private void awaitQueued(int count) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (GroupCommitProbe.queued(inbox) != count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("expected " + count + " queued callers, found " + GroupCommitProbe.queued(inbox));
            }
            // Polling the queue's length: joining the queue fires no event to wait on.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** Waits for {@code latch} through interrupts and keeps the interrupt, as well-behaved code does. */
    private static boolean awaitKeepingInterrupt(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        interrupted |= Thread.currentThread().isInterrupted();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return interrupted;
    }

    @Test
    void queuedCallerInterruptedLeavesTheQueueAndTheOthersAreApplied() throws Exception {
        Caller blocker = blockWriter();
        AtomicBoolean xRan = new AtomicBoolean();
        Caller x = queue("x", tx -> {
            xRan.set(true);
            return add(tx, 100);
        });
        Caller y = queue("y", tx -> add(tx, 10));
        Caller z = queue("z", tx -> add(tx, 10));

        x.thread.interrupt();

        // The writer is still held: x can only have returned because the interrupt made it leave.
        InboxException thrown = x.failure();
        assertFalse(thrown instanceof InboxBusyException, thrown.toString());
        assertTrue(thrown.getMessage().contains("interrupted") && thrown.getMessage().contains("nothing was applied"),
                thrown.getMessage());
        assertTrue(x.interruptedAfter, "x's interrupt flag is still set when apply returns");
        assertEquals(2, GroupCommitProbe.queued(inbox), "y and z are still queued");

        releaseBlocker.countDown();

        assertInstanceOf(Outcome.Applied.class, blocker.outcome());
        assertInstanceOf(Outcome.Applied.class, y.outcome());
        assertInstanceOf(Outcome.Applied.class, z.outcome());
        assertFalse(y.interruptedAfter || z.interruptedAfter, "only x was interrupted");
        assertFalse(xRan.get(), "x's effect never ran");
        assertTrue(inbox.find("x").isEmpty());
        assertEquals(1 + 10 + 10, total());
        assertEquals(3, rows());
        assertInstanceOf(Outcome.Applied.class, inbox.apply("x", Content.of(10), tx -> add(tx, 100)),
                "x applies when it is sent again");
    }

    @Test
    void callerArrivingInterruptedWhileTheWriterIsBusyLeavesAtOnce() throws Exception {
        Caller blocker = blockWriter();
        AtomicBoolean lateRan = new AtomicBoolean();
        Caller late = new Caller("late", tx -> {
            lateRan.set(true);
            return add(tx, 100);
        }, true);
        callers.add(late);
        late.thread.start();

        // Returns while the writer is still held, so it neither waited for the writer nor for the timeout.
        InboxException thrown = late.failure();
        assertTrue(thrown.getMessage().contains("interrupted"), thrown.getMessage());
        assertTrue(late.interruptedAfter);
        assertEquals(0, GroupCommitProbe.queued(inbox), "it left no request behind");

        releaseBlocker.countDown();
        assertInstanceOf(Outcome.Applied.class, blocker.outcome());
        assertFalse(lateRan.get());
        assertTrue(inbox.find("late").isEmpty());
        assertEquals(1, total());
    }

    @Test
    void interruptReachingTheWritingThreadIsSeenByNoLaterEffectOfTheGroupAndStaysWithThatThreadsCaller()
            throws Exception {
        Caller blocker = blockWriter();
        AtomicReference<Thread> writing = new AtomicReference<>();
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch interruptSent = new CountDownLatch(1);
        AtomicBoolean firstSawInterrupt = new AtomicBoolean();
        AtomicReference<Thread> secondThread = new AtomicReference<>();
        AtomicReference<Boolean> secondSawInterrupt = new AtomicReference<>();
        Caller p = queue("p", tx -> {
            writing.set(Thread.currentThread());
            firstRunning.countDown();
            firstSawInterrupt.set(awaitKeepingInterrupt(interruptSent));
            return add(tx, 10);
        });
        Caller q = queue("q", tx -> {
            secondThread.set(Thread.currentThread());
            secondSawInterrupt.set(Thread.currentThread().isInterrupted());
            return add(tx, 10);
        });

        releaseBlocker.countDown();
        assertInstanceOf(Outcome.Applied.class, blocker.outcome());
        assertTrue(firstRunning.await(WAIT_SECONDS, TimeUnit.SECONDS));
        writing.get().interrupt();
        interruptSent.countDown();

        assertInstanceOf(Outcome.Applied.class, p.outcome());
        assertInstanceOf(Outcome.Applied.class, q.outcome());
        assertTrue(firstSawInterrupt.get(), "the interrupt reached the effect that was running");
        assertSame(writing.get(), secondThread.get(), "p and q ran in one group, on one thread");
        assertFalse(secondSawInterrupt.get(), "the next effect of the group saw no interrupt");
        // Whichever of p and q led the group, the interrupt was its thread's, and only it keeps it.
        Caller leader = writing.get() == p.thread ? p : q;
        Caller follower = leader == p ? q : p;
        assertTrue(leader.interruptedAfter, "the leading caller's interrupt flag is set after its call");
        assertFalse(follower.interruptedAfter, "the other caller was never interrupted");
        assertEquals(1 + 10 + 10, total());
        assertEquals(3, rows());
    }

    @Test
    void callerInterruptedAfterItsWorkWasTakenGetsItsOutcomeAndKeepsTheInterrupt() throws Exception {
        Caller blocker = blockWriter();
        AtomicReference<Thread> writing = new AtomicReference<>();
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Caller p = queue("p", tx -> {
            writing.set(Thread.currentThread());
            firstRunning.countDown();
            finish.await();
            return add(tx, 10);
        });
        Caller q = queue("q", tx -> add(tx, 10));

        releaseBlocker.countDown();
        assertInstanceOf(Outcome.Applied.class, blocker.outcome());
        // p's effect runs: the group holding p and q was taken, by whichever of them leads.
        assertTrue(firstRunning.await(WAIT_SECONDS, TimeUnit.SECONDS));
        Caller leader = writing.get() == p.thread ? p : q;
        Caller follower = leader == p ? q : p;
        follower.thread.interrupt();
        finish.countDown();

        assertInstanceOf(Outcome.Applied.class, follower.outcome(), "the follower's real outcome");
        assertInstanceOf(Outcome.Applied.class, leader.outcome());
        assertTrue(follower.interruptedAfter, "the follower's interrupt flag is restored before it returns");
        assertFalse(leader.interruptedAfter);
        assertTrue(inbox.find(follower.id).isPresent());
        assertEquals(1 + 10 + 10, total());
        assertEquals(3, rows());
    }

    /** One caller of {@code apply} on a thread of its own, and its interrupt flag when apply returned. */
    private final class Caller {
        final String id;
        final Thread thread;
        final CompletableFuture<Outcome<Integer>> result = new CompletableFuture<>();
        volatile boolean interruptedAfter;

        Caller(String id, Effect<Handle, Integer, Exception> effect, boolean interruptedBefore) {
            this.id = id;
            this.thread = new Thread(() -> {
                if (interruptedBefore) {
                    Thread.currentThread().interrupt();
                }
                try {
                    Outcome<Integer> outcome = inbox.apply(id, Content.of(10), effect);
                    interruptedAfter = Thread.currentThread().isInterrupted();
                    result.complete(outcome);
                } catch (Throwable failure) {
                    interruptedAfter = Thread.currentThread().isInterrupted();
                    result.completeExceptionally(failure);
                }
            }, "caller-" + id);
        }

        Outcome<Integer> outcome() throws Exception {
            return result.get(WAIT_SECONDS, TimeUnit.SECONDS);
        }

        InboxException failure() {
            ExecutionException thrown = assertThrows(ExecutionException.class,
                    () -> result.get(WAIT_SECONDS, TimeUnit.SECONDS), id + " did not fail");
            return assertInstanceOf(InboxException.class, thrown.getCause());
        }
    }
}
