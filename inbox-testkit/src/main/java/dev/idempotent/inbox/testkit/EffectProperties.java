package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Proves <em>your</em> effect and schema with the inbox: applied through an inbox under duplicates,
 * conflicting payloads, failures, restarts and concurrent deliveries, the effect changes the
 * business state exactly as if each distinct accepted message were applied once. Subclass it in
 * your tests, with a real database, and supply:
 *
 * <ul>
 *   <li>{@link #openFixture()}: the database with your schema, and how to build an inbox over it
 *       ({@link #fixture(Jdbi, Supplier)} makes one from a Jdbi and a builder);
 *   <li>{@link #payloads()} and {@link #content(Object)}: your business payload and what "the same
 *       business" means for it;
 *   <li>{@link #effect(Handle, String, Object)}: your business change, as your consumer runs it;
 *   <li>{@link #resetBusinessState(Jdbi)}, {@link #expected(List)} and {@link #actual(Jdbi)}: a
 *       model of your state as a pure function of the messages applied, and how to read the real
 *       state back.
 * </ul>
 *
 * <p>Message ids come from a small alphabet ({@code m-0} to {@code m-3}), so most sequences deliver
 * an id more than once: again with the payload of its previous delivery (a resend), or with
 * another generated payload, which is a duplicate if its content equals the recorded one and a
 * conflict otherwise. Keep the payload space small too (a few values per field), so that both
 * happen. About one delivery in four fails: the harness throws after your effect has run, and the
 * inbox must roll your writes back. Your effect may throw as well, for a payload it refuses; such a
 * delivery counts as failed like an injected one. After each delivery (each round, concurrently)
 * the properties check the outcome against "first content wins" and that
 * {@code actual(jdbi).equals(expected(applied))}, where {@code applied} lists the (id, payload) of
 * each id's first accepted delivery in commit order. A conflict or a failed delivery therefore
 * never changes the state, and a retry after a failure applies.
 *
 * <p>Order: in the sequential properties the list is in commit order, so a model may depend on
 * the order across ids only where your effect's result does too (a running balance that refuses
 * overdrafts, say). The commit order of concurrent deliveries is not known; the concurrent
 * property passes the list in an order it chooses, so it means something only for a model that
 * ignores order. Return false from {@link #stateIgnoresCommitOrder()} to skip it.
 *
 * <p>What it does not prove: side effects outside the database transaction (a message sent, a
 * file written, a cache updated, a call to another service) are not rolled back with it and not
 * seen by {@link #actual(Jdbi)}; an effect that reads the clock or other state than the payload
 * and the transaction is not a function of the messages, so no model can predict it. Make such
 * effects transactional (an outbox row) before you trust this proof for them.
 *
 * <p>Each example gets a fresh inbox name, and {@link #resetBusinessState(Jdbi)} is called before
 * it, so examples (and the replays of shrinking) never see each other's rows. A failing property
 * reports the smallest sequence it found and the seed of the run ("Seed was ..."); replay it with
 * the system property {@code QT_SEED}, as for {@link InboxProperties}:
 *
 * <pre>{@code
 * mvn verify -Dtest='OrderEffectTest#sequentialDeliveriesChangeStateAsTheModelSays' -DQT_SEED=1234567890
 * }</pre>
 *
 * <p>Give your payload a readable {@code toString()} (a record has one): the reports print it.
 *
 * @param <M> the business payload of one message
 * @param <S> the business state, compared with {@link Object#equals(Object)}; a {@code Long} will
 *     do for a single number
 */
public abstract class EffectProperties<M, S> {

    /** Deliveries run by several threads at once: one per thread, in each round. */
    private static final int THREADS = 8;
    /** A loaded machine must not make concurrent deliveries give up: being busy is not what this is about. */
    private static final Duration BUSY_TIMEOUT = Duration.ofSeconds(60);

    /**
     * One message as the model sees it: an id that was applied and the payload it was first
     * accepted with.
     *
     * @param <M> the business payload
     * @param id the message id
     * @param payload the payload of the delivery that applied it
     */
    public record AppliedMessage<M>(String id, M payload) {

        /**
         * Checks the components.
         *
         * @param id the message id; not {@code null}
         * @param payload the payload; not {@code null}
         */
        public AppliedMessage {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(payload, "payload");
        }
    }

    private InboxFixture opened;
    /** Applied outcomes over all examples of a property: zero means the effect never completed. */
    private final AtomicInteger appliedInProperty = new AtomicInteger();

    /** For subclasses. */
    protected EffectProperties() {}

    /**
     * A real database with your schema created, and how to build an inbox over it; opened before
     * each property and closed after it. {@link #fixture(Jdbi, Supplier)} makes one; an adapter's
     * own {@link InboxFixture} will do as well.
     *
     * @return the fixture
     * @throws Exception if the database cannot be prepared; the property fails
     */
    protected abstract InboxFixture openFixture() throws Exception;

    /**
     * Your business payloads. Keep the space small, so that two deliveries of one id often carry
     * different payloads (a conflict) and sometimes equal ones (a duplicate).
     *
     * @return a generator of payloads, never generating {@code null}
     */
    protected abstract Gen<M> payloads();

    /**
     * What "the same business" means for a payload, as your consumer computes it: for instance
     * {@code Content.json(...)} of the message body. Two payloads that must count as the same
     * message must give equal content.
     *
     * @param payload a generated payload
     * @return its content
     */
    protected abstract Content content(M payload);

    /**
     * Your business change for one message, as your consumer runs it inside the inbox's
     * transaction. It may throw to refuse a payload; then the delivery fails and nothing of it may
     * remain.
     *
     * @param tx the inbox's transaction handle; write through it only
     * @param id the message id
     * @param payload the payload
     * @throws Exception to fail the delivery
     */
    protected abstract void effect(Handle tx, String id, M payload) throws Exception;

    /**
     * Empties your business tables, or sets them to the state that {@link #expected(List)} of an
     * empty list describes. Called before each example, with no inbox open.
     *
     * @param jdbi the database
     */
    protected abstract void resetBusinessState(Jdbi jdbi);

    /**
     * The state your tables must hold after the messages {@code appliedInOrder}, and only they,
     * were applied once each: a pure function, of no database.
     *
     * @param appliedInOrder each applied id with the payload it was first accepted with, in commit
     *     order (see the class description for concurrent deliveries); unmodifiable
     * @return the expected state, compared with {@link #actual(Jdbi)} by {@code equals}
     */
    protected abstract S expected(List<AppliedMessage<M>> appliedInOrder);

    /**
     * The state your tables hold, read through connections of their own after a delivery returned.
     *
     * @param jdbi the database
     * @return the committed state
     */
    protected abstract S actual(Jdbi jdbi);

    /**
     * Whether {@link #expected(List)} gives the same state for every order of its list. The
     * concurrent property runs only if it does, since the commit order of concurrent deliveries is
     * not known. True by default.
     *
     * @return false to skip the concurrent property
     */
    protected boolean stateIgnoresCommitOrder() {
        return true;
    }

    /**
     * A fixture over a database you prepared: {@code jdbi} for your schema and for reading state,
     * and {@code builders} for inboxes over the same database. Each call of {@code builders} should
     * open the database anew (for SQLite: {@code () -> SqliteInbox.builder(file)}), so that building
     * again behaves like a restarted process. Closing the fixture does nothing; the fixture serves
     * {@code EffectProperties} only, and its other methods throw
     * {@link UnsupportedOperationException}.
     *
     * @param jdbi the database, with your schema
     * @param builders a fresh builder with default settings for each call
     * @return the fixture
     */
    protected static InboxFixture fixture(Jdbi jdbi,
            Supplier<? extends InboxBuilder<? extends JdbiInbox>> builders) {
        Objects.requireNonNull(jdbi, "jdbi");
        Objects.requireNonNull(builders, "builders");
        return new InboxFixture() {
            @Override
            public Jdbi jdbi() {
                return jdbi;
            }

            @Override
            public InboxBuilder<? extends JdbiInbox> builder() {
                return builders.get();
            }

            @Override
            public HeldLock holdWriteLock(String inbox, String id) {
                throw new UnsupportedOperationException("not needed to prove an effect");
            }

            @Override
            public void insertReceivedRows(String inbox, String prefix, int count, Instant receivedAt) {
                throw new UnsupportedOperationException("not needed to prove an effect");
            }

            @Override
            public void close() {
                // The caller owns the database.
            }
        };
    }

    @BeforeEach
    void openDatabase() throws Exception {
        opened = Objects.requireNonNull(openFixture(), "openFixture()");
        appliedInProperty.set(0);
    }

    @AfterEach
    void closeDatabase() {
        opened.close();
    }

    /**
     * One inbox, deliveries one after another: each outcome follows "first content wins", a
     * failed delivery (injected after the effect ran, or thrown by it) records nothing, and after
     * each delivery the state is the model's.
     */
    @Test
    void sequentialDeliveriesChangeStateAsTheModelSays() {
        qt().withExamples(40).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(deliveries(0))
                .checkAssert(deliveries -> deliver("seq", deliveries, false));
        assertSomethingApplied();
    }

    /**
     * As {@link #sequentialDeliveriesChangeStateAsTheModelSays()}, where the inbox is closed and
     * built again before about one delivery in five, as a restarted process would. Afterwards a
     * new inbox finds every applied id with the content it was first accepted with, and a resend
     * of the whole sequence changes nothing that was applied.
     */
    @Test
    void reopenedInboxKeepsTheStateAsTheModelSays() {
        qt().withExamples(20).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(deliveries(5))
                .checkAssert(deliveries -> deliver("reopen", deliveries, true));
        assertSomethingApplied();
    }

    /**
     * Rounds of up to eight deliveries, one thread each, released together by a barrier: per id
     * exactly one delivery is Applied unless each of its deliveries failed; every other one that
     * did not fail is a Duplicate or Conflict against the applied content, in the same round as
     * the applied one or a later round; after each round the state is the model's. Skipped when
     * {@link #stateIgnoresCommitOrder()} is false.
     */
    @Test
    void concurrentDeliveriesChangeStateAsTheModelSays() {
        Assumptions.assumeTrue(stateIgnoresCommitOrder(),
                "the model depends on commit order, which concurrent deliveries do not fix");
        Gen<List<List<Delivery<M>>>> rounds = lists().of(lists().of(step(0)).ofSizeBetween(1, THREADS))
                .ofSizeBetween(1, 8)
                .map(EffectProperties::resolveRounds);
        qt().withExamples(25).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(rounds)
                .checkAssert(this::deliverConcurrently);
        assertSomethingApplied();
    }

    private void assertSomethingApplied() {
        assertTrue(appliedInProperty.get() > 0, "no delivery was ever applied: the effect threw every time it ran,"
                + " so the property proved nothing");
    }

    private void deliver(String prefix, List<Delivery<M>> deliveries, boolean resendAfterRestart) {
        Model model = startExample();
        String name = Generators.uniqueName(prefix);
        Inbox<Handle> inbox = opened.builder().name(name).build();
        try {
            for (int i = 0; i < deliveries.size(); i++) {
                Delivery<M> delivery = deliveries.get(i);
                if (delivery.restartBefore()) {
                    inbox.close();
                    inbox = opened.builder().name(name).build();
                }
                model.expect(delivery, receive(inbox, delivery), "delivery " + (i + 1) + " of " + deliveries.size());
                model.assertState("after delivery " + (i + 1) + " of " + deliveries.size() + ", " + delivery);
            }
        } finally {
            inbox.close();
        }
        try (Inbox<Handle> reopened = opened.builder().name(name).build()) {
            model.assertRecords(reopened, deliveries);
            if (resendAfterRestart) {
                for (Delivery<M> delivery : deliveries) {
                    model.expect(delivery.withoutFailure(), receive(reopened, delivery.withoutFailure()),
                            "resend after the last restart");
                }
                model.assertState("after resending the whole sequence to a restarted inbox");
            }
        }
    }

    private void deliverConcurrently(List<List<Delivery<M>>> rounds) {
        Model model = startExample();
        String name = Generators.uniqueName("par");
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try (Inbox<Handle> inbox = opened.builder().name(name).busyTimeout(BUSY_TIMEOUT).build()) {
            for (int r = 0; r < rounds.size(); r++) {
                List<Delivery<M>> round = rounds.get(r);
                CyclicBarrier start = new CyclicBarrier(round.size());
                List<Future<Result>> futures = new ArrayList<>();
                for (Delivery<M> delivery : round) {
                    futures.add(pool.submit(() -> {
                        start.await();
                        return receive(inbox, delivery);
                    }));
                }
                List<Result> results = new ArrayList<>();
                for (Future<Result> future : futures) {
                    results.add(Concurrency.get(future));
                }
                model.expectRound(round, results, "round " + (r + 1) + " of " + rounds.size());
                model.assertState("after round " + (r + 1) + " of " + rounds.size() + ", " + round);
            }
            model.assertRecords(inbox, rounds.stream().flatMap(List::stream).toList());
        } finally {
            pool.shutdownNow();
        }
    }

    private Model startExample() {
        resetBusinessState(opened.jdbi());
        Model model = new Model();
        model.assertState("after resetBusinessState, before any delivery");
        return model;
    }

    /**
     * Delivers once; the failure it returns is always the effect's own exception or the injected
     * one, since anything else the inbox throws fails the property.
     */
    private Result receive(Inbox<Handle> inbox, Delivery<M> delivery) {
        Content content = content(delivery.payload());
        InjectedFailure injected = delivery.failsAfterEffect() ? new InjectedFailure(delivery) : null;
        AtomicReference<Exception> thrownByEffect = new AtomicReference<>();
        AtomicInteger effectRuns = new AtomicInteger();
        try {
            Outcome<Void> outcome = inbox.apply(delivery.id(), content, tx -> {
                effectRuns.incrementAndGet();
                try {
                    effect(tx, delivery.id(), delivery.payload());
                } catch (Exception e) {
                    thrownByEffect.set(e);
                    throw e;
                }
                if (injected != null) {
                    throw injected;
                }
            });
            return new Result(content, outcome, null, effectRuns.get());
        } catch (Exception e) {
            if (e == injected || e == thrownByEffect.get()) {
                return new Result(content, null, e, effectRuns.get());
            }
            throw new AssertionError("the inbox failed " + delivery + " with " + e, e);
        }
    }

    /** What one delivery gave: an outcome, or the exception of a failed effect. */
    private record Result(Content content, Outcome<Void> outcome, Exception failure, int effectRuns) {

        boolean applied() {
            return outcome instanceof Outcome.Applied;
        }

        @Override
        public String toString() {
            return failure != null ? "failed with " + failure : outcome.getClass().getSimpleName();
        }
    }

    /** What has been recorded so far, and what the state must therefore be. */
    private final class Model {

        final Map<String, Content> recorded = new HashMap<>();
        final List<AppliedMessage<M>> applied = new ArrayList<>();

        /** A delivery that ran alone: its outcome follows from what was recorded before it. */
        void expect(Delivery<M> delivery, Result result, String where) {
            String about = where + ", " + delivery + ": ";
            Content first = recorded.get(delivery.id());
            if (first == null) {
                if (result.failure() != null) {
                    assertEquals(1, result.effectRuns(), about + "the effect ran once before it failed");
                    return;
                }
                assertEquals(Outcome.Applied.class, result.outcome().getClass(), about + "a new id is Applied");
                assertEquals(1, result.effectRuns(), about + "the effect of an Applied delivery ran once");
                record(delivery, result);
            } else {
                Class<?> expected = first.equals(result.content()) ? Outcome.Duplicate.class : Outcome.Conflict.class;
                assertEquals(expected.getSimpleName(), result.toString(), about + "an id recorded earlier");
                assertEquals(0, result.effectRuns(), about + "the effect does not run for a " + result);
            }
        }

        /**
         * Deliveries that ran at once: per id, at most one is Applied, and only if nothing was
         * recorded before the round; every other one that did not fail is judged against it.
         */
        void expectRound(List<Delivery<M>> round, List<Result> results, String where) {
            Set<String> before = Set.copyOf(recorded.keySet());
            for (int i = 0; i < round.size(); i++) {
                Result result = results.get(i);
                String id = round.get(i).id();
                String about = where + ", " + round.get(i) + ": ";
                if (result.applied()) {
                    assertFalse(before.contains(id), about + "Applied, but the id was recorded in an earlier round");
                    assertFalse(recorded.containsKey(id),
                            about + "a second delivery of the id was Applied: " + round + " gave " + results);
                    assertEquals(1, result.effectRuns(), about + "the effect of an Applied delivery ran once");
                    record(round.get(i), result);
                }
            }
            for (int i = 0; i < round.size(); i++) {
                Result result = results.get(i);
                String about = where + ", " + round.get(i) + ": ";
                if (result.applied()) {
                    continue;
                }
                if (result.failure() != null) {
                    assertEquals(1, result.effectRuns(), about + "the effect ran once before it failed");
                    continue;
                }
                Content first = recorded.get(round.get(i).id());
                if (first == null) {
                    fail(about + result + ", but no delivery of the id was Applied in this round or before: "
                            + round + " gave " + results);
                }
                Class<?> expected = first.equals(result.content()) ? Outcome.Duplicate.class : Outcome.Conflict.class;
                assertEquals(expected.getSimpleName(), result.toString(), about + "judged against the applied content");
                assertEquals(0, result.effectRuns(), about + "the effect does not run for a " + result);
            }
        }

        private void record(Delivery<M> delivery, Result result) {
            recorded.put(delivery.id(), result.content());
            applied.add(new AppliedMessage<>(delivery.id(), delivery.payload()));
            appliedInProperty.incrementAndGet();
        }

        void assertState(String when) {
            S expected = expected(List.copyOf(applied));
            S actual = actual(opened.jdbi());
            assertEquals(expected, actual, "business state " + when + "; applied in order: " + applied);
        }

        /** The inbox knows each applied id with the content it was first accepted with, and no other id. */
        void assertRecords(Inbox<Handle> inbox, List<Delivery<M>> deliveries) {
            Set<String> ids = new LinkedHashSet<>();
            deliveries.forEach(delivery -> ids.add(delivery.id()));
            for (String id : ids) {
                Optional<InboxRecord> found = inbox.find(id);
                Content first = recorded.get(id);
                if (first == null) {
                    assertTrue(found.isEmpty(), "every delivery of " + id + " failed, yet the inbox holds " + found);
                } else {
                    assertTrue(found.isPresent(), "applied id " + id + " has no inbox record");
                    assertEquals(first.fingerprint(), found.get().fingerprint(), "the record of " + id);
                }
            }
        }
    }

    /**
     * Up to 20 deliveries; with {@code restartOneIn} above zero, about one in that many is
     * preceded by a restart. Shrinks towards fewer deliveries, without resends, failures or
     * restarts.
     */
    private Gen<List<Delivery<M>>> deliveries(int restartOneIn) {
        return lists().of(step(restartOneIn)).ofSizeBetween(0, 20).map(EffectProperties::resolve);
    }

    private Gen<Step<M>> step(int restartOneIn) {
        // true is each flag's largest value, so that shrinking drops the flags first
        Gen<Boolean> resend = integers().between(0, 2).map(n -> n == 2);
        Gen<Boolean> fails = integers().between(0, 3).map(n -> n == 3);
        Gen<Boolean> restart = restartOneIn > 0
                ? integers().between(1, restartOneIn).map(n -> n == restartOneIn)
                : Generate.constant(false);
        Gen<M> payloads = Objects.requireNonNull(payloads(), "payloads()");
        return Generators.ids().zip(payloads, resend, fails, restart, Step::new);
    }

    /** A resend takes the payload of the id's previous delivery, whatever became of that one. */
    private static <M> List<Delivery<M>> resolve(List<Step<M>> steps) {
        Map<String, M> previous = new HashMap<>();
        List<Delivery<M>> deliveries = new ArrayList<>();
        for (Step<M> step : steps) {
            M payload = step.resend() && previous.containsKey(step.id()) ? previous.get(step.id()) : step.payload();
            previous.put(step.id(), payload);
            deliveries.add(new Delivery<>(step.id(), payload, step.fails(), step.restart()));
        }
        return List.copyOf(deliveries);
    }

    private static <M> List<List<Delivery<M>>> resolveRounds(List<List<Step<M>>> rounds) {
        List<Delivery<M>> flat = resolve(rounds.stream().flatMap(List::stream).toList());
        List<List<Delivery<M>>> resolved = new ArrayList<>();
        int next = 0;
        for (List<Step<M>> round : rounds) {
            resolved.add(flat.subList(next, next + round.size()));
            next += round.size();
        }
        return List.copyOf(resolved);
    }

    /** A generated delivery before resends are resolved. */
    private record Step<M>(String id, M payload, boolean resend, boolean fails, boolean restart) {}

    /** One delivery to run. */
    private record Delivery<M>(String id, M payload, boolean failsAfterEffect, boolean restartBefore) {

        Delivery<M> withoutFailure() {
            return new Delivery<>(id, payload, false, false);
        }

        @Override
        public String toString() {
            return (restartBefore ? "(restart) " : "") + id + " " + payload
                    + (failsAfterEffect ? " (fails after the effect)" : "");
        }
    }

    /** Thrown after the user's effect ran, so that the inbox must roll its writes back. */
    private static final class InjectedFailure extends Exception {

        InjectedFailure(Delivery<?> delivery) {
            super("injected failure after the effect of " + delivery, null, false, false);
        }
    }
}
