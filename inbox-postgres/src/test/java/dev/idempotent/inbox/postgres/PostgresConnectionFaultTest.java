package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.testkit.GroupCommitProbe;
import dev.idempotent.inbox.testkit.Stock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The connection to PostgreSQL lost before, during and after the commit, under a single apply,
 * group commit and applyAll. What the caller hears must match what the server holds: Applied only
 * for a committed message, a definite failure (any exception but {@link OutcomeUnknownException})
 * only for one that did not commit, {@code OutcomeUnknownException} for the rest; and a retry
 * after an unknown outcome answers Duplicate exactly when the first commit happened.
 *
 * <p>The server's truth is read through a connection of its own, after the fault; the faults are
 * {@code pg_terminate_backend} from another session and a {@link FaultRelay} that drops the COMMIT
 * or its answer.
 */
class PostgresConnectionFaultTest {

    private static final Duration LONG_WAIT = Duration.ofSeconds(60);
    private static final int RUNS = 4;
    private static final int MESSAGES = 4;
    private static final String GATE = "-gate";

    /** How the messages of one run are applied. */
    enum Mode {
        /** One {@code apply} per caller, each its own transaction. */
        SINGLE,
        /** {@link CommitMode#GROUP}: concurrent callers released together, committed in groups. */
        GROUP,
        /** One {@code applyAll} of all the messages, one transaction. */
        BATCH
    }

    /** Where the connection is lost. */
    enum Fault {
        /** The backend is terminated while the effect runs, before its statement. */
        KILLED_DURING_THE_EFFECT,
        /** The backend is terminated after the effect, before the COMMIT is sent. */
        KILLED_BEFORE_THE_COMMIT,
        /** The COMMIT is dropped with the connection on its way to the server. */
        COMMIT_LOST_ON_THE_WAY,
        /** The server commits; its answer is lost with the connection. */
        ANSWER_LOST
    }

    /** What a caller heard. */
    enum Heard { APPLIED, DUPLICATE, DEFINITE_FAILURE, UNKNOWN }

    private PostgresFixture fixture;
    private Stock stock;
    private FaultRelay relay;
    private final List<PostgresInbox> opened = new ArrayList<>();
    private final ExecutorService callers = Executors.newCachedThreadPool();

    @BeforeEach
    void open() throws Exception {
        fixture = PostgresFixture.withDefaultNames();
        stock = Stock.create(fixture.jdbi(), "warehouse");
        relay = new FaultRelay(PostgresFixture.HOST, PostgresFixture.PORT);
    }

    @AfterEach
    void close() {
        callers.shutdownNow();
        opened.forEach(PostgresInbox::close);
        relay.close();
        fixture.close();
    }

    static Stream<Arguments> modesAndFaults() {
        return Stream.of(Mode.values()).flatMap(mode -> Stream.of(Fault.values()).map(fault -> Arguments.of(mode, fault)));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("modesAndFaults")
    void callerHearsAppliedOnlyForWhatCommittedAndRetryTellsTheTruth(Mode mode, Fault fault) throws Exception {
        Map<String, Integer> pids = new ConcurrentHashMap<>();
        AtomicBoolean armed = new AtomicBoolean();
        AtomicInteger kills = new AtomicInteger();
        Jdbi admin = fixture.admin();
        InboxListener killer = new InboxListener() {
            @Override
            public void onPhase(String inbox, String id, Phase phase) {
                if (fault == Fault.KILLED_BEFORE_THE_COMMIT && phase == Phase.EFFECT_DONE && !id.endsWith(GATE)
                        && armed.compareAndSet(true, false)) {
                    terminate(admin, pids.get(id));
                    kills.incrementAndGet();
                }
            }
        };
        InboxBuilder<PostgresInbox> builder = PostgresInbox.builder(fixture.jdbiVia(relay.port(), ""))
                .name("warehouse").busyTimeout(LONG_WAIT).listener(killer);
        PostgresInbox faulty = open(mode == Mode.GROUP ? builder.commitMode(CommitMode.GROUP) : builder);
        PostgresInbox direct = open(fixture.builder().name("warehouse").busyTimeout(LONG_WAIT));

        Map<Heard, Integer> heard = new EnumMap<>(Heard.class);
        Map<String, Integer> retries = new LinkedHashMap<>();
        int committedUnknown = 0;
        int uncommittedUnknown = 0;
        long expectedTotal = 0;
        for (int run = 0; run < RUNS; run++) {
            Map<String, Integer> quantities = new LinkedHashMap<>();
            for (int m = 0; m < MESSAGES; m++) {
                quantities.put("run" + run + "-m" + m, 1 + run * MESSAGES + m);
            }
            int cutsBefore = relay.commitsCut();
            int killsBefore = kills.get();
            armed.set(true);
            // Under group commit a gate message commits first, alone, so that the fault hits the
            // group of all the others queued behind it.
            int passing = mode == Mode.GROUP ? 1 : 0;
            if (fault == Fault.COMMIT_LOST_ON_THE_WAY) {
                relay.cutCommit(FaultRelay.Cut.BEFORE_THE_SERVER, passing);
            } else if (fault == Fault.ANSWER_LOST) {
                relay.cutCommit(FaultRelay.Cut.AFTER_THE_SERVER, passing);
            }
            AtomicBoolean killDuringEffect = new AtomicBoolean(fault == Fault.KILLED_DURING_THE_EFFECT);
            Effect effect = (tx, id, qty) -> {
                int pid = tx.createQuery("SELECT pg_backend_pid()").mapTo(Integer.class).one();
                pids.put(id, pid);
                if (!id.endsWith(GATE) && killDuringEffect.compareAndSet(true, false)) {
                    terminate(admin, pid);
                    kills.incrementAndGet();
                }
                return stock.add(tx, qty);
            };

            Map<String, Heard> outcomes = apply(mode, faulty, "run" + run + GATE, quantities, effect);

            if (fault == Fault.COMMIT_LOST_ON_THE_WAY || fault == Fault.ANSWER_LOST) {
                assertTrue(relay.commitsCut() > cutsBefore, "the relay cut a COMMIT in run " + run);
            } else {
                assertEquals(killsBefore + 1, kills.get(), "one backend terminated in run " + run);
            }
            // The server's truth, through a connection of its own.
            Set<String> committed = new TreeSet<>();
            for (String id : quantities.keySet()) {
                if (direct.find(id).isPresent()) {
                    committed.add(id);
                    expectedTotal += quantities.get(id);
                }
            }
            assertEquals(expectedTotal, stock.total(), "the total holds the quantity of every committed id, once");
            for (Map.Entry<String, Heard> entry : outcomes.entrySet()) {
                String id = entry.getKey();
                Heard what = entry.getValue();
                heard.merge(what, 1, Integer::sum);
                switch (what) {
                    case APPLIED -> assertTrue(committed.contains(id), id + " heard Applied but did not commit");
                    case DEFINITE_FAILURE -> assertFalse(committed.contains(id), id + " heard a definite failure but committed");
                    case UNKNOWN -> {
                        if (committed.contains(id)) {
                            committedUnknown++;
                        } else {
                            uncommittedUnknown++;
                        }
                    }
                    case DUPLICATE -> fail(id + " is new, yet heard Duplicate");
                }
                // The retry, on a sound connection, tells what happened.
                Outcome<Integer> retry = direct.apply(id, Content.of(quantities.get(id)), tx -> stock.add(tx, quantities.get(id)));
                if (committed.contains(id)) {
                    assertTrue(retry instanceof Outcome.Duplicate<?>, id + " committed, so its retry is Duplicate: " + retry);
                } else {
                    assertTrue(retry instanceof Outcome.Applied<?>, id + " did not commit, so its retry is Applied: " + retry);
                    expectedTotal += quantities.get(id);
                }
                retries.merge(retry.getClass().getSimpleName(), 1, Integer::sum);
            }
            assertEquals(expectedTotal, stock.total(), "after the retries every quantity counts once");
        }
        long gates = mode == Mode.GROUP ? RUNS : 0;
        assertEquals(RUNS * MESSAGES + gates, Stock.inboxRows(fixture.jdbi(), "warehouse"), "one row per id, none lost");
        if (mode != Mode.SINGLE) {
            assertEquals(0, heard.getOrDefault(Heard.APPLIED, 0), "the fault hit every message of the group or batch");
        }
        if (fault == Fault.ANSWER_LOST) {
            assertTrue(committedUnknown > 0, "a lost answer to a COMMIT that took effect is unknown");
        }
        if (fault == Fault.COMMIT_LOST_ON_THE_WAY) {
            assertTrue(uncommittedUnknown > 0, "a lost COMMIT is unknown");
        }
        System.out.printf("[pg-fault] %s %s: runs=%d messages=%d heard=%s unknown(committed=%d, not=%d) retries=%s lost=0 doubled=0%n",
                mode, fault, RUNS, RUNS * MESSAGES, heard, committedUnknown, uncommittedUnknown, retries);
    }

    /** One message's effect, told its id and quantity. */
    @FunctionalInterface
    interface Effect {
        int run(Handle tx, String id, int qty);
    }

    private Map<String, Heard> apply(Mode mode, PostgresInbox inbox, String gate, Map<String, Integer> quantities,
            Effect effect) throws Exception {
        Map<String, Heard> heard = new LinkedHashMap<>();
        if (mode == Mode.BATCH) {
            List<Message> messages = quantities.entrySet().stream()
                    .map(e -> Message.of(e.getKey(), Content.of(e.getValue())))
                    .toList();
            try {
                List<MessageResult<Integer>> results = inbox.applyAll(messages,
                        (tx, message) -> effect.run(tx, message.id(), quantities.get(message.id())));
                for (MessageResult<Integer> result : results) {
                    heard.put(result.message().id(), result.outcome().map(PostgresConnectionFaultTest::heard)
                            .orElseGet(() -> heard(result.failure().orElseThrow())));
                }
            } catch (RuntimeException e) {
                quantities.keySet().forEach(id -> heard.put(id, heard(e)));
            }
            return heard;
        }
        // SINGLE and GROUP: one caller per message, released together. Under group commit they
        // queue behind a gate message whose effect waits until all of them are queued.
        CountDownLatch gateRunning = new CountDownLatch(1);
        CountDownLatch queued = new CountDownLatch(1);
        Future<?> gateCall = null;
        if (mode == Mode.GROUP) {
            gateCall = callers.submit(() -> inbox.apply(gate, Content.of(0), tx -> {
                gateRunning.countDown();
                assertTrue(queued.await(LONG_WAIT.toSeconds(), TimeUnit.SECONDS), "the callers queued");
                return stock.add(tx, 0);
            }));
            assertTrue(gateRunning.await(LONG_WAIT.toSeconds(), TimeUnit.SECONDS), "the gate message runs");
        }
        CyclicBarrier start = new CyclicBarrier(quantities.size());
        Map<String, Future<Heard>> calls = new LinkedHashMap<>();
        for (Map.Entry<String, Integer> entry : quantities.entrySet()) {
            calls.put(entry.getKey(), callers.submit(() -> {
                start.await(LONG_WAIT.toSeconds(), TimeUnit.SECONDS);
                try {
                    return heard(inbox.apply(entry.getKey(), Content.of(entry.getValue()),
                            tx -> effect.run(tx, entry.getKey(), entry.getValue())));
                } catch (RuntimeException e) {
                    return heard(e);
                }
            }));
        }
        if (gateCall != null) {
            long deadline = System.nanoTime() + LONG_WAIT.toNanos();
            while (GroupCommitProbe.queued(inbox) < quantities.size()) {
                assertTrue(System.nanoTime() < deadline, "the callers did not queue behind the gate");
                LockSupport.parkNanos(1_000_000);
            }
            queued.countDown();
            gateCall.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        for (Map.Entry<String, Future<Heard>> call : calls.entrySet()) {
            // A caller left hanging fails here rather than holding the build.
            heard.put(call.getKey(), call.getValue().get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS));
        }
        return heard;
    }

    private static Heard heard(Outcome<?> outcome) {
        if (outcome instanceof Outcome.Applied<?>) {
            return Heard.APPLIED;
        }
        if (outcome instanceof Outcome.Duplicate<?>) {
            return Heard.DUPLICATE;
        }
        throw new AssertionError("a new id with one content cannot conflict: " + outcome);
    }

    private static Heard heard(Exception failure) {
        return failure instanceof OutcomeUnknownException ? Heard.UNKNOWN : Heard.DEFINITE_FAILURE;
    }

    private static void terminate(Jdbi admin, Integer pid) {
        boolean gone = admin.withHandle(handle -> handle.createQuery("SELECT pg_terminate_backend(:pid, 10000)")
                .bind("pid", pid)
                .mapTo(Boolean.class)
                .one());
        assertTrue(gone, "backend " + pid + " was terminated");
    }

    private PostgresInbox open(InboxBuilder<PostgresInbox> builder) {
        PostgresInbox inbox = builder.build();
        opened.add(inbox);
        return inbox;
    }
}
