package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idempotent.inbox.CallContext;
import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/**
 * The behaviour of {@link CommitMode#GROUP} on a real database: concurrent callers committed in
 * one transaction each get their own outcome, a failure inside a group stays with its caller
 * unless it is the commit's, an interrupted caller leaves alone, and an effect run on another
 * caller's thread sees its own caller's context. Also checks that {@link CommitMode#PER_CALLER}
 * runs every effect on its caller's thread.
 *
 * <p>Subclass it in the adapter's tests and implement {@link #openFixture()}; the contract sets
 * the commit mode on the fixture's builder itself.
 *
 * <p>Several tests make callers meet in one group: a first caller's effect holds the writer,
 * blocked on a latch, while the others call the inbox; the latch opens once they all have. Arrival
 * in the group commit's queue cannot be observed from outside the core, so "have called" means the
 * inbox has captured the caller's {@link CallContext}, the last thing {@code apply} does before it
 * queues (or, for the MDC test, which keeps the default context, that the caller is about to call).
 * A caller delayed between the two may still miss the group; such a test checks every outcome
 * anyway and then reports itself aborted, not passed, if no group formed.
 */
public abstract class GroupCommitContract {

    private static final String INBOX = "warehouse";
    private static final String MDC_KEY = "caller";
    private static final long WAIT_SECONDS = 60;
    // Far beyond any wait here: only the events a test causes end a caller's wait.
    private static final Duration BUSY_TIMEOUT = Duration.ofMinutes(10);
    private static final long LEADER_QTY = 1000;

    /** What a tracing library binds to a thread; carried by {@link #observed()} as the MDC is by default. */
    private static final ThreadLocal<String> TRACE = new ThreadLocal<>();

    /** The fixture of the running test, for subclasses' own scenarios. */
    protected InboxFixture fixture;
    private Stock stock;
    private final List<Inbox<Handle>> opened = new ArrayList<>();
    private final List<Caller> callers = Collections.synchronizedList(new ArrayList<>());
    private final Map<Thread, Caller> byThread = new ConcurrentHashMap<>();
    private final CountDownLatch releaseLeader = new CountDownLatch(1);
    private final AtomicInteger restores = new AtomicInteger();

    /** For subclasses. */
    protected GroupCommitContract() {}

    /**
     * A fixture over a fresh, real database; closed after each test.
     *
     * @return the fixture
     * @throws Exception if the database cannot be prepared; the test fails
     */
    protected abstract InboxFixture openFixture() throws Exception;

    /**
     * A builder, like {@link InboxFixture#builder()}, for inboxes whose transactions check a
     * deferred foreign key ({@code DEFERRABLE INITIALLY DEFERRED}) when they commit, so that an
     * effect can make its group's commit fail while each of its statements succeeds. The default
     * is the fixture's builder, for databases that always check foreign keys (PostgreSQL); SQLite
     * checks them only on connections that ask for it. Return empty if the database cannot defer a
     * constraint to the commit; the test that needs it is then skipped.
     *
     * @return the builder, or empty
     */
    protected Optional<InboxBuilder<? extends Inbox<Handle>>> builderCheckingForeignKeys() {
        return Optional.of(fixture.builder());
    }

    @BeforeEach
    void openDatabase() throws Exception {
        fixture = openFixture();
        stock = Stock.create(fixture.jdbi(), "warehouse");
    }

    @AfterEach
    void closeDatabase() throws InterruptedException {
        releaseLeader.countDown();
        List<Caller> started;
        synchronized (callers) {
            started = new ArrayList<>(callers);
        }
        for (Caller caller : started) {
            caller.thread.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        }
        opened.forEach(Inbox::close);
        fixture.close();
    }

    private Inbox<Handle> inbox(CommitMode mode) {
        return inbox(fixture.builder(), mode, CallContext.of(CallContext.mdc(), observed()));
    }

    private Inbox<Handle> inbox(InboxBuilder<? extends Inbox<Handle>> builder, CommitMode mode, CallContext context) {
        InboxBuilder<? extends Inbox<Handle>> configured =
                builder.name(INBOX).busyTimeout(BUSY_TIMEOUT).commitMode(mode);
        Inbox<Handle> inbox = (context == null ? configured : configured.callContext(context)).build();
        opened.add(inbox);
        return inbox;
    }

    /**
     * Carries {@link #TRACE}, counts the restores, and tells a caller's test that the inbox has its
     * call: capture runs on the caller's thread right before the call queues.
     */
    private CallContext observed() {
        return () -> {
            String trace = TRACE.get();
            Caller caller = byThread.get(Thread.currentThread());
            if (caller != null) {
                caller.arrived.countDown();
            }
            return () -> {
                restores.incrementAndGet();
                String own = TRACE.get();
                TRACE.set(trace);
                return () -> TRACE.set(own);
            };
        };
    }

    private Caller start(String name, Call call) {
        Caller caller = new Caller(name, call);
        callers.add(caller);
        caller.thread.start();
        return caller;
    }

    /** A caller that applies {@code id} with {@code qty}; its effect adds qty and returns the caller's name. */
    private Caller receive(Inbox<Handle> inbox, String id, long qty) {
        return start(id, self -> inbox.apply(id, Content.of(qty), tx -> {
            self.ran();
            stock.add(tx, qty);
            return self.name;
        }));
    }

    /** Holds the writer with a caller whose effect blocks until {@link #releaseLeader} opens. */
    private Caller holdWriter(Inbox<Handle> inbox) {
        CountDownLatch running = new CountDownLatch(1);
        Caller leader = start("leader", self -> inbox.apply("leader", Content.of(LEADER_QTY), tx -> {
            self.ran();
            running.countDown();
            releaseLeader.await();
            return stock.add(tx, LEADER_QTY);
        }));
        await(running, "the leader's effect did not run");
        return leader;
    }

    private static void await(CountDownLatch latch, String failure) {
        try {
            assertTrue(latch.await(WAIT_SECONDS, TimeUnit.SECONDS), failure);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted: " + failure, e);
        }
    }

    private static void awaitArrived(List<Caller> waiting) {
        for (Caller caller : waiting) {
            await(caller.arrived, caller.name + " did not reach the inbox");
        }
    }

    private long rows() {
        return Stock.inboxRows(fixture, INBOX);
    }

    private static long qty(Message message) {
        return ByteBuffer.wrap(message.content().bytes()).getLong();
    }

    /** Aborts a test whose callers all ran alone: it passed, but proved nothing about groups. */
    private static void assumeGrouped(boolean grouped) {
        assumeTrue(grouped, "the callers did not meet in one group this time, so the run proves nothing about groups");
    }

    @Test
    void concurrentCallersEachGetTheirOwnOutcomeAndTheTotalIsRight() {
        Inbox<Handle> inbox = inbox(CommitMode.GROUP);
        int threads = 16;
        int ids = threads / 2;
        CyclicBarrier together = new CyclicBarrier(threads);
        List<Caller> started = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            // Two callers per id, with the same content: one applies it, the other finds a duplicate.
            String id = "r" + (i % ids);
            long qty = i % ids + 1;
            started.add(start("c" + i, self -> {
                together.await(WAIT_SECONDS, TimeUnit.SECONDS);
                return inbox.apply(id, Content.of(qty), tx -> {
                    self.ran();
                    stock.add(tx, qty);
                    return self.name;
                });
            }));
        }

        for (int i = 0; i < ids; i++) {
            Caller first = started.get(i);
            Caller second = started.get(i + ids);
            Object one = first.result();
            Object other = second.result();
            assertTrue(one instanceof Outcome.Applied<?> ^ other instanceof Outcome.Applied<?>,
                    "exactly one of the two callers of r" + i + " applied it: " + one + ", " + other);
            Caller applier = one instanceof Outcome.Applied<?> ? first : second;
            Outcome.Applied<?> applied = (Outcome.Applied<?>) applier.result();
            assertEquals(applier.name, applied.result(), "the applier gets its own effect's result");
            Outcome.Duplicate<?> duplicate = assertInstanceOf(Outcome.Duplicate.class,
                    (applier == first ? second : first).result());
            assertEquals("r" + i, duplicate.id());
            assertNull((applier == first ? second : first).ranOn, "a duplicate's effect does not run");
        }
        assertEquals(ids * (ids + 1) / 2, stock.total());
        assertEquals(ids, rows());
        assertEquals(ids, inbox.stats().applied());
        assertEquals(ids, inbox.stats().duplicates());
    }

    @Test
    void batchesInsideAGroupAreJudgedMessageByMessage() {
        Inbox<Handle> inbox = inbox(CommitMode.GROUP);
        Caller leader = holdWriter(inbox);
        List<Caller> batches = new ArrayList<>();
        List<Caller> singles = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            String p = "b" + t + "-";
            List<Message> batch = List.of(Message.of(p + "a", Content.of(1)), Message.of(p + "b", Content.of(2)),
                    Message.of(p + "a", Content.of(1)), Message.of(p + "a", Content.of(9)),
                    Message.of(p + "bad", Content.of(4)), Message.of(p + "c", Content.of(8)));
            batches.add(start(p, self -> inbox.applyAll(batch, (tx, message) -> {
                self.ran();
                if (message.id().endsWith("bad")) {
                    throw new Refused(message.id());
                }
                stock.add(tx, qty(message));
                return message.id();
            })));
            singles.add(receive(inbox, "s" + t, 100));
        }
        List<Caller> followers = new ArrayList<>(batches);
        followers.addAll(singles);
        awaitArrived(followers);

        releaseLeader.countDown();

        assertInstanceOf(Outcome.Applied.class, leader.result());
        for (Caller batch : batches) {
            List<?> results = assertInstanceOf(List.class, batch.result());
            assertEquals(6, results.size());
            List<String> kinds = new ArrayList<>();
            for (Object each : results) {
                MessageResult<?> result = (MessageResult<?>) each;
                kinds.add(result.outcome().<String>map(o -> o.getClass().getSimpleName())
                        .orElseGet(() -> result.failure().orElseThrow().getClass().getSimpleName()));
            }
            assertEquals(List.of("Applied", "Applied", "Duplicate", "Conflict", "Refused", "Applied"), kinds,
                    batch.name);
            assertTrue(inbox.find(batch.name + "bad").isEmpty(), "the failed message was rolled back alone");
        }
        for (Caller single : singles) {
            assertInstanceOf(Outcome.Applied.class, single.result());
        }
        assertEquals(LEADER_QTY + 4 * (1 + 2 + 8) + 4 * 100, stock.total());
        assertEquals(1 + 4 * 3 + 4, rows());
        assumeGrouped(followers.stream().anyMatch(Caller::ranElsewhere));
    }

    @Test
    void failingEffectInAGroupFailsOnlyItsCaller() {
        Inbox<Handle> inbox = inbox(CommitMode.GROUP);
        Caller leader = holdWriter(inbox);
        List<Caller> followers = new ArrayList<>();
        Refused refusal = new Refused("f2");
        for (int i = 0; i < 6; i++) {
            String id = "f" + i;
            long qty = i + 1;
            followers.add(start(id, self -> inbox.apply(id, Content.of(qty), tx -> {
                self.ran();
                stock.add(tx, qty);
                if (id.equals("f2")) {
                    throw refusal;
                }
                return self.name;
            })));
        }
        awaitArrived(followers);

        releaseLeader.countDown();

        assertInstanceOf(Outcome.Applied.class, leader.result());
        Caller failing = followers.get(2);
        assertSame(refusal, failing.failure(), "the effect's own exception, unwrapped, reaches its caller");
        assertTrue(inbox.find("f2").isEmpty());
        for (Caller follower : followers) {
            if (follower != failing) {
                Outcome.Applied<?> applied = assertInstanceOf(Outcome.Applied.class, follower.result(), follower.name);
                assertEquals(follower.name, applied.result());
            }
        }
        assertEquals(LEADER_QTY + 1 + 2 + 4 + 5 + 6, stock.total());
        assertEquals(6, rows());
        assumeGrouped(followers.stream().filter(f -> f != failing).anyMatch(f -> f.ranOn == failing.ranOn));
    }

    @Test
    void groupWhoseCommitFailsFailsEveryCallerInItAndRecordsNothingOfIt() {
        Optional<InboxBuilder<? extends Inbox<Handle>>> checking = builderCheckingForeignKeys();
        assumeTrue(checking.isPresent(), "this database cannot defer a constraint to the commit");
        fixture.jdbi().useHandle(handle -> {
            handle.execute("CREATE TABLE deferred_parent (id INTEGER PRIMARY KEY)");
            handle.execute("CREATE TABLE deferred_child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL"
                    + " REFERENCES deferred_parent (id) DEFERRABLE INITIALLY DEFERRED)");
        });
        Inbox<Handle> inbox = inbox(checking.get(), CommitMode.GROUP, CallContext.of(CallContext.mdc(), observed()));
        Caller leader = holdWriter(inbox);
        List<Caller> followers = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String id = "g" + i;
            long qty = 1L << i;
            followers.add(start(id, self -> inbox.apply(id, Content.of(qty), tx -> {
                self.ran();
                stock.add(tx, qty);
                if (id.equals("g1")) {
                    // Succeeds as a statement; the commit checks the missing parent and refuses.
                    tx.execute("INSERT INTO deferred_child (id, parent_id) VALUES (1, 42)");
                }
                return self.name;
            })));
        }
        awaitArrived(followers);

        releaseLeader.countDown();

        assertInstanceOf(Outcome.Applied.class, leader.result());
        Caller violating = followers.get(1);
        // Each leader's group runs on that leader's thread, so the callers whose effects ran on
        // the violator's thread are exactly those that shared its transaction.
        followers.forEach(Caller::awaitDone);
        long expected = LEADER_QTY;
        int grouped = 0;
        for (Caller follower : followers) {
            if (follower.ranOn == null) {
                throw new AssertionError(follower.name + "'s effect did not run", follower.failure());
            }
            if (follower.ranOn == violating.ranOn) {
                grouped++;
                assertInstanceOf(InboxException.class, follower.failure(), follower.name + " shared the failed commit");
                assertFalse(follower.failure() instanceof OutcomeUnknownException,
                        "the database refused the commit, which is a definite failure: " + follower.failure());
                assertTrue(inbox.find(follower.name).isEmpty(), follower.name + " is not recorded");
            } else {
                assertInstanceOf(Outcome.Applied.class, follower.result(), follower.name + " was in another group");
                expected += 1L << followers.indexOf(follower);
            }
        }
        assertEquals(expected, stock.total());
        assertEquals(1 + followers.size() - grouped, rows());
        long children = fixture.jdbi().withHandle(handle ->
                handle.createQuery("SELECT COUNT(*) FROM deferred_child").mapTo(Long.class).one());
        assertEquals(0, children, "the violating row went with the failed commit");
        assumeGrouped(grouped > 1);
    }

    @Test
    void queuedCallerInterruptedLeavesAloneWithNothingApplied() {
        Inbox<Handle> inbox = inbox(CommitMode.GROUP);
        Caller leader = holdWriter(inbox);
        AtomicBoolean interruptedRan = new AtomicBoolean();
        Caller before = receive(inbox, "before", 10);
        Caller interrupted = start("interrupted", self -> inbox.apply("interrupted", Content.of(100), tx -> {
            interruptedRan.set(true);
            return stock.add(tx, 100);
        }));
        Caller after = receive(inbox, "after", 20);
        awaitArrived(List.of(before, interrupted, after));

        interrupted.thread.interrupt();

        // The writer is still held: the caller can only return now because the interrupt made it leave.
        Throwable left = interrupted.failure();
        assertInstanceOf(InboxException.class, left);
        assertFalse(left instanceof InboxBusyException, left.toString());
        assertTrue(interrupted.interruptedAfter, "the interrupt flag is still set when apply returns");

        releaseLeader.countDown();

        assertInstanceOf(Outcome.Applied.class, leader.result());
        assertInstanceOf(Outcome.Applied.class, before.result());
        assertInstanceOf(Outcome.Applied.class, after.result());
        assertFalse(before.interruptedAfter || after.interruptedAfter || leader.interruptedAfter,
                "only the interrupted caller's flag is set");
        assertFalse(interruptedRan.get(), "its effect never ran");
        assertTrue(inbox.find("interrupted").isEmpty());
        assertEquals(LEADER_QTY + 10 + 20, stock.total());
        assertEquals(3, rows());
    }

    @Test
    void effectRunOnAnotherCallersThreadSeesItsOwnCallersMdc() {
        MDC.put("probe", "kept");
        boolean mdcKeepsValues = "kept".equals(MDC.get("probe"));
        MDC.remove("probe");
        assumeTrue(mdcKeepsValues, "no SLF4J provider that keeps an MDC is on the test class path (neither the"
                + " no-operation fallback nor slf4j-simple keeps one); add one, such as slf4j-jdk14 or logback, in"
                + " test scope to run this test");
        // The default context, the MDC: arrival is known only from each caller being about to call.
        Inbox<Handle> inbox = inbox(fixture.builder(), CommitMode.GROUP, null);
        Caller leader = holdWriter(inbox);
        List<Caller> followers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            followers.add(receive(inbox, "m" + i, 1));
        }
        for (Caller follower : followers) {
            await(follower.ready, follower.name + " did not start");
        }

        releaseLeader.countDown();

        assertInstanceOf(Outcome.Applied.class, leader.result());
        for (Caller follower : followers) {
            assertInstanceOf(Outcome.Applied.class, follower.result());
            assertEquals(follower.name, follower.mdcSeen, follower.name + "'s effect sees its caller's MDC");
            assertEquals(follower.name, follower.mdcAfter, follower.name + "'s thread has its own MDC back");
        }
        assumeGrouped(followers.stream().anyMatch(Caller::ranElsewhere));
    }

    @Test
    void effectRunOnAnotherCallersThreadSeesItsOwnCallersContext() {
        Inbox<Handle> inbox = inbox(CommitMode.GROUP);
        Caller leader = holdWriter(inbox);
        List<Caller> followers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            followers.add(receive(inbox, "t" + i, 1));
        }
        awaitArrived(followers);

        releaseLeader.countDown();

        assertInstanceOf(Outcome.Applied.class, leader.result());
        for (Caller follower : followers) {
            assertInstanceOf(Outcome.Applied.class, follower.result());
            assertEquals(follower.name, follower.traceSeen, follower.name + "'s effect sees its caller's context");
            assertEquals(follower.name, follower.traceAfter, follower.name + "'s thread has its own context back");
        }
        long elsewhere = followers.stream().filter(Caller::ranElsewhere).count();
        assertEquals(elsewhere, restores.get(), "a context is restored exactly for the effects run on another thread");
        assumeGrouped(elsewhere > 0);
    }

    @Test
    void listenerHearsTheSizeOfEachCommittedGroup() {
        List<Integer> sizes = Collections.synchronizedList(new ArrayList<>());
        InboxListener listener = new InboxListener() {
            @Override
            public void onGroupCommitted(String inbox, int size) {
                sizes.add(size);
            }
        };
        Inbox<Handle> inbox = inbox(fixture.builder().listener(listener), CommitMode.GROUP,
                CallContext.of(CallContext.mdc(), observed()));
        Caller leader = holdWriter(inbox);
        List<Caller> followers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            followers.add(receive(inbox, "s" + i, 1));
        }
        awaitArrived(followers);

        releaseLeader.countDown();

        assertInstanceOf(Outcome.Applied.class, leader.result());
        for (Caller follower : followers) {
            assertInstanceOf(Outcome.Applied.class, follower.result());
        }
        List<Integer> heard = List.copyOf(sizes);
        assertEquals(1, heard.get(0), "the leader's group held it alone: " + heard);
        assertEquals(7, heard.stream().mapToInt(Integer::intValue).sum(), "every message committed once: " + heard);
        assumeGrouped(heard.size() < 7);
    }

    @Test
    void perCallerCommitRunsEveryEffectOnItsCallersOwnThread() {
        Inbox<Handle> inbox = inbox(CommitMode.PER_CALLER);
        int threads = 16;
        CyclicBarrier together = new CyclicBarrier(threads);
        List<Caller> started = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            String id = "p" + i;
            started.add(start(id, self -> {
                together.await(WAIT_SECONDS, TimeUnit.SECONDS);
                return inbox.apply(id, Content.of(1), tx -> {
                    self.ran();
                    return stock.add(tx, 1);
                });
            }));
        }

        for (Caller caller : started) {
            assertInstanceOf(Outcome.Applied.class, caller.result());
            assertSame(caller.thread, caller.ranOn, caller.name + "'s effect ran on its caller's thread");
            assertEquals(caller.name, caller.traceSeen);
        }
        assertEquals(0, restores.get(), "nothing is restored for an effect on its caller's thread");
        assertEquals(threads, stock.total());
        assertEquals(threads, rows());
    }

    /** What a caller does on its thread; returns what apply or applyAll returned. */
    @FunctionalInterface
    private interface Call {
        Object call(Caller self) throws Exception;
    }

    /** The exception a test's effect throws on purpose. */
    private static final class Refused extends RuntimeException {
        Refused(String id) {
            super("refused " + id, null, false, false);
        }
    }

    /** One calling thread, with its own MDC and context, and what its effect saw wherever it ran. */
    private final class Caller {
        final String name;
        final Thread thread;
        /** About to call the inbox. */
        final CountDownLatch ready = new CountDownLatch(1);
        /** The inbox captured its context: the call is about to queue. */
        final CountDownLatch arrived = new CountDownLatch(1);
        private final CountDownLatch done = new CountDownLatch(1);
        private volatile Object result;
        private volatile Throwable failure;
        volatile Thread ranOn;
        volatile String mdcSeen;
        volatile String traceSeen;
        volatile boolean interruptedAfter;
        volatile String mdcAfter;
        volatile String traceAfter;

        Caller(String name, Call call) {
            this.name = name;
            this.thread = new Thread(() -> run(call), "caller-" + name);
            byThread.put(thread, this);
        }

        private void run(Call call) {
            MDC.put(MDC_KEY, name);
            TRACE.set(name);
            try {
                ready.countDown();
                result = call.call(this);
            } catch (Throwable e) {
                failure = e;
            } finally {
                interruptedAfter = Thread.currentThread().isInterrupted();
                mdcAfter = MDC.get(MDC_KEY);
                traceAfter = TRACE.get();
                MDC.clear();
                TRACE.remove();
                done.countDown();
            }
        }

        /** Called by the effect, on whichever thread runs it. */
        void ran() {
            ranOn = Thread.currentThread();
            mdcSeen = MDC.get(MDC_KEY);
            traceSeen = TRACE.get();
        }

        boolean ranElsewhere() {
            return ranOn != null && ranOn != thread;
        }

        void awaitDone() {
            await(done, name + " did not return");
        }

        Object result() {
            awaitDone();
            if (failure != null) {
                throw new AssertionError(name + " failed", failure);
            }
            return result;
        }

        Throwable failure() {
            awaitDone();
            assertNotNull(failure, name + " returned " + result + " instead of failing");
            return failure;
        }
    }
}
