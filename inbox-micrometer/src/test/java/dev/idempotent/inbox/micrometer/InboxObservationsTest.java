package dev.idempotent.inbox.micrometer;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idempotent.inbox.CallObserver;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import dev.idempotent.inbox.testkit.MutableClock;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.NullObservation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.ObservationView;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.MDC;

/**
 * The observation of each apply, of each joined call up to its caller's commit or rollback, and the
 * caller's context inside its effect under group commit.
 */
class InboxObservationsTest {

    private static final String INBOX = "receipts";

    @TempDir
    Path dir;

    private final TestObservationRegistry observations = TestObservationRegistry.create();

    private SqliteInbox open() {
        return open(InboxObservations.of(observations));
    }

    private SqliteInbox open(CallObserver observer) {
        return SqliteInbox.builder(dir.resolve("observed.db"))
                .name(INBOX)
                .busyTimeout(Duration.ofMinutes(1))
                .callContext(PropagatedCallContext.withMdc())
                .observer(observer)
                .build();
    }

    @Test
    void eachApplyIsObservedWithItsOutcomeAndTheIdOnlyAsAHighCardinalityKey() {
        MutableClock clock = new MutableClock(Instant.parse("2026-03-01T00:00:00Z"));
        try (SqliteInbox inbox = SqliteInbox.builder(dir.resolve("observed.db")).name(INBOX).clock(clock)
                .retention(Duration.ofDays(1)).observer(InboxObservations.of(observations)).build()) {
            clock.advance(Duration.ofDays(2));
            inbox.retention().purge();
            assertThrows(StaleMessageException.class,
                    () -> inbox.apply("snack-1", Content.of(1), clock.instant().minus(Duration.ofDays(2)), tx -> 1));
            inbox.apply("snack-7", Content.of(7), tx -> 1);
            inbox.apply("snack-7", Content.of(7), tx -> 1);
            inbox.apply("snack-7", Content.of(8), tx -> 1);
            IllegalStateException thrown = assertThrows(IllegalStateException.class,
                    () -> inbox.apply("snack-8", Content.of(1), tx -> {
                        throw new IllegalStateException("the effect fails");
                    }));

            assertThat(observations)
                    .hasNumberOfObservationsWithNameEqualTo("inbox.apply", 5)
                    .forAllObservationsWithNameEqualTo("inbox.apply", observation -> observation
                            .hasLowCardinalityKeyValue("inbox", INBOX)
                            .doesNotHaveLowCardinalityKeyValueWithKey("message.id")
                            .hasHighCardinalityKeyValueWithKey("message.id"));
            assertThat(observations)
                    .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "applied")
                            .hasHighCardinalityKeyValue("message.id", "snack-7"))
                    .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "duplicate"))
                    .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "conflict"))
                    .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "failed")
                            .hasHighCardinalityKeyValue("message.id", "snack-8")
                            .hasError(thrown))
                    .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "applied").doesNotHaveError())
                    .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "stale").doesNotHaveError());
        }
    }

    @Test
    void aMeterHandlerGivesTheApplyTimerByOutcomeWithoutIds() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        try (SqliteInbox inbox = SqliteInbox.builder(dir.resolve("observed.db")).name(INBOX)
                .observer(InboxObservations.of(registry)).build()) {
            inbox.apply("snack-7", Content.of(7), tx -> 1);
            inbox.apply("snack-7", Content.of(7), tx -> 1);
            inbox.apply("snack-9", Content.of(9), tx -> 1);
        }

        assertEquals(2, meters.get("inbox.apply").tag("inbox", INBOX).tag("outcome", "applied").tag("error", "none")
                .timer().count());
        assertEquals(1, meters.get("inbox.apply").tag("outcome", "duplicate").timer().count());
        for (Meter meter : meters.find("inbox.apply").meters()) {
            Set<String> keys = meter.getId().getTags().stream().map(Tag::getKey).collect(Collectors.toSet());
            assertEquals(Set.of("inbox", "outcome", "error"), keys, "tags of " + meter.getId());
            assertTrue(meter.getId().getTags().stream().noneMatch(tag -> tag.getValue().startsWith("snack-")));
        }
    }

    @Test
    void aJoinedCallThroughAHandleIsObservedUntilItsCommit() {
        try (SqliteInbox inbox = open(); Handle handle = inbox.jdbi().open()) {
            inbox.apply("snack-7", Content.of(7), tx -> 1);
            observations.clear();

            handle.begin();
            Outcome<Integer> outcome = inbox.applyIn(handle, "snack-8", Content.of(8), tx -> 8);
            assertInstanceOf(Outcome.Applied.class, outcome);
            assertThat(observations).hasSingleObservationThat().hasBeenStarted().isNotStopped()
                    .hasHighCardinalityKeyValue("message.id", "snack-8")
                    .doesNotHaveLowCardinalityKeyValueWithKey("outcome");
            handle.commit();
            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasLowCardinalityKeyValue("inbox", INBOX)
                    .hasLowCardinalityKeyValue("outcome", "applied")
                    .doesNotHaveError();
            assertNull(observations.getCurrentObservation(), "the call's scope was closed on return");
            observations.clear();

            handle.begin();
            assertInstanceOf(Outcome.Duplicate.class, inbox.applyIn(handle, "snack-7", Content.of(7), tx -> 1));
            handle.commit();
            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasLowCardinalityKeyValue("outcome", "duplicate");
        }
    }

    @Test
    void aJoinedCallThroughAHandleWhoseTransactionRollsBackIsObservedAsRolledBack() {
        try (SqliteInbox inbox = open(); Handle handle = inbox.jdbi().open()) {
            handle.begin();
            inbox.applyIn(handle, "snack-8", Content.of(8), tx -> 8);
            assertThat(observations).hasSingleObservationThat().isNotStopped();
            handle.rollback();

            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasLowCardinalityKeyValue("inbox", INBOX)
                    .hasLowCardinalityKeyValue("outcome", "rolled_back")
                    .hasHighCardinalityKeyValue("message.id", "snack-8")
                    .doesNotHaveError();
            assertTrue(inbox.find("snack-8").isEmpty());
        }
    }

    @Test
    void aJoinedCallThroughAConnectionIsObservedUntilItsCallerReportsTheEnd() throws Exception {
        try (SqliteInbox inbox = open(); Handle own = inbox.jdbi().open()) {
            Connection connection = own.getConnection();
            connection.setAutoCommit(false);
            PendingOutcome<Integer> applied = inbox.applyIn(connection, "snack-8", Content.of(8), tx -> 8);
            connection.commit();
            assertThat(observations).hasSingleObservationThat().isNotStopped();
            assertInstanceOf(Outcome.Applied.class, applied.committed());
            applied.committed();
            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasLowCardinalityKeyValue("outcome", "applied");
            observations.clear();

            PendingOutcome<Integer> undone = inbox.applyIn(connection, "snack-9", Content.of(9), tx -> 9);
            connection.rollback();
            undone.rolledBack();
            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasLowCardinalityKeyValue("outcome", "rolled_back");
            observations.clear();

            IllegalStateException thrown = assertThrows(IllegalStateException.class,
                    () -> inbox.applyIn(connection, "snack-10", Content.of(10), tx -> {
                        throw new IllegalStateException("the effect fails");
                    }));
            connection.rollback();
            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasLowCardinalityKeyValue("outcome", "failed")
                    .hasError(thrown);
            connection.setAutoCommit(true);
        }
    }

    @Test
    void aJoinedCallIsAChildOfTheCallersObservation() {
        try (SqliteInbox inbox = open(); Handle handle = inbox.jdbi().open()) {
            Observation caller = Observation.start("caller", observations);
            Observation[] inEffect = new Observation[1];
            try (Observation.Scope scope = caller.openScope()) {
                handle.useTransaction(tx -> inbox.applyIn(tx, "snack-8", Content.of(8), effectTx -> {
                    inEffect[0] = observations.getCurrentObservation();
                    return 8;
                }));
            } finally {
                caller.stop();
            }
            assertEquals("inbox.apply", inEffect[0].getContext().getName());
            assertSame(caller, inEffect[0].getContext().getParentObservation());
            assertThat(observations)
                    .hasNumberOfObservationsWithNameEqualTo("inbox.apply", 1)
                    .hasObservationWithNameEqualTo("inbox.apply").that().hasBeenStopped()
                    .hasParentObservationEqualTo(caller)
                    .hasLowCardinalityKeyValue("outcome", "applied");
        }
    }

    @Test
    void theCallersObservationIsTheParentInsideItsEffectUnderGroupCommit() throws Exception {
        MDC.put("probe", "kept");
        boolean mdcKeepsValues = "kept".equals(MDC.get("probe"));
        MDC.remove("probe");
        assumeTrue(mdcKeepsValues, "the test class path needs an SLF4J provider that keeps an MDC (slf4j-jdk14)");
        List<Follower> followers = new ArrayList<>();
        try (SqliteInbox inbox = open()) {
            try (HeldWriter held = HeldWriter.hold(inbox, "leader")) {
                for (int i = 0; i < 4; i++) {
                    followers.add(new Follower("follower-" + i, inbox));
                }
                HeldWriter.awaitQueued(inbox, followers.size());
                held.release();
            }
            for (Follower follower : followers) {
                assertInstanceOf(Outcome.Applied.class, follower.result.get(HeldWriter.WAIT_SECONDS, TimeUnit.SECONDS));
            }
        }

        long elsewhere = followers.stream().filter(f -> f.effectThread != f.thread).count();
        // The first follower to take the writer runs the whole group, its own and the others' effects.
        assertEquals(followers.size() - 1, elsewhere, "one group of followers, run by one of them");
        for (Follower follower : followers) {
            Observation current = follower.currentInEffect;
            assertEquals("inbox.apply", current.getContext().getName(), follower.name);
            assertEquals(follower.name, current.getContext().getHighCardinalityKeyValue("message.id").getValue());
            ObservationView parent = current.getContext().getParentObservation();
            assertSame(follower.own, parent, follower.name + "'s effect runs under its caller's observation");
            assertEquals(follower.name, follower.mdcInEffect, follower.name + "'s effect sees its caller's MDC");
            assertSame(follower.own, follower.currentAfter, follower.name + " has its own observation back");
        }
        Follower runner = followers.stream().filter(f -> f.effectThread == f.thread).findFirst().orElseThrow();
        for (Follower other : followers) {
            if (other != runner) {
                assertNotSame(runner.own, other.currentInEffect.getContext().getParentObservation(),
                        "the thread's own observation does not leak into another caller's effect");
            }
        }
        assertNull(observations.getCurrentObservation(), "the test thread has no observation left open");
    }

    @Test
    void aCallerWithoutAnObservationRunsUnderNoneEvenOnAnObservedThread() throws Exception {
        List<Follower> observed = new ArrayList<>();
        Follower bare;
        // Unobserved, so that each effect sees its caller's own observation, or none.
        try (SqliteInbox inbox = open(CallObserver.NONE)) {
            try (HeldWriter held = HeldWriter.hold(inbox, "leader")) {
                for (int i = 0; i < 4; i++) {
                    observed.add(new Follower("observed-" + i, inbox, true));
                    HeldWriter.awaitQueued(inbox, i + 1);
                }
                // Queued last, so the first observed caller is woken to lead and runs this one's effect.
                bare = new Follower("bare", inbox, false);
                HeldWriter.awaitQueued(inbox, observed.size() + 1);
                held.release();
            }
            for (Follower follower : observed) {
                assertInstanceOf(Outcome.Applied.class, follower.result.get(HeldWriter.WAIT_SECONDS, TimeUnit.SECONDS));
                assertSame(follower.own, follower.currentInEffect, follower.name + " sees its own observation");
            }
            assertInstanceOf(Outcome.Applied.class, bare.result.get(HeldWriter.WAIT_SECONDS, TimeUnit.SECONDS));
        }
        assumeTrue(bare.effectThread != bare.thread, "the bare caller led the group itself this time");
        // Micrometer clears the current observation by putting its NullObservation in place.
        Observation seen = bare.currentInEffect;
        assertTrue(seen == null || seen instanceof NullObservation,
                "no observation of the thread that ran the bare caller's effect leaks into it: " + seen);
    }

    /** A caller with an observation and an MDC of its own, which records what its effect saw. */
    private final class Follower {
        final String name;
        final Thread thread;
        final CompletableFuture<Outcome<Integer>> result = new CompletableFuture<>();
        volatile Observation own;
        volatile Observation currentInEffect;
        volatile Observation currentAfter;
        volatile String mdcInEffect;
        volatile Thread effectThread;

        Follower(String name, Inbox<Handle> inbox) {
            this(name, inbox, true);
        }

        /** Without {@code observe}, the caller calls with no observation of its own open. */
        Follower(String name, Inbox<Handle> inbox, boolean observe) {
            this.name = name;
            this.thread = new Thread(() -> {
                MDC.put("caller", name);
                Observation observation = observe ? Observation.start("caller", observations) : Observation.NOOP;
                own = observe ? observation : null;
                try (Observation.Scope scope = observation.openScope()) {
                    Outcome<Integer> outcome = inbox.apply(name, Content.of(1), tx -> {
                        effectThread = Thread.currentThread();
                        currentInEffect = observations.getCurrentObservation();
                        mdcInEffect = MDC.get("caller");
                        return 1;
                    });
                    currentAfter = observations.getCurrentObservation();
                    result.complete(outcome);
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                } finally {
                    observation.stop();
                    MDC.clear();
                }
            }, name);
            thread.start();
        }
    }
}
