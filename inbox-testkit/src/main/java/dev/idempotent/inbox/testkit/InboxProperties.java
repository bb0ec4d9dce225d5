package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.testkit.Generators.Attempt;
import dev.idempotent.inbox.testkit.Generators.PlannedFailure;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * The invariants every adapter keeps, checked with QuickTheories over random delivery sequences
 * against a real database. Ids come from a small alphabet ({@code m-0} to {@code m-3}) and
 * quantities from 1 to 3, so duplicates and conflicts are frequent. Each example works under an
 * inbox name and a stock row of its own, so examples (and the replays of shrinking) never see each
 * other's rows. Subclass it in the adapter's tests and implement {@link #openFixture()}.
 *
 * <p>A failing property reports the smallest input it found and the seed of the run ("Seed was
 * ..."). To replay that run, pass the seed as the system property {@code QT_SEED}, which
 * QuickTheories reads:
 *
 * <pre>{@code
 * mvn -pl inbox-sqlite -am verify -Dtest='SqliteInboxPropertiesTest#concurrentDeliveriesKeepTheInvariants' \
 *     -Dsurefire.failIfNoSpecifiedTests=false -DQT_SEED=1234567890
 * }</pre>
 *
 * <p>or, while debugging, insert {@code .withFixedSeed(1234567890L)} after {@code qt()}. The
 * concurrent properties replay the same input; the interleaving of the threads is up to the
 * machine.
 */
public abstract class InboxProperties {

    /** One delivery: an id and the quantity it claims. */
    public record Delivery(String id, long qty) {}

    private InboxFixture fixture;

    /**
     * A fixture over a fresh, real database; closed after each property.
     *
     * @return the fixture
     * @throws Exception if the database cannot be prepared; the property fails
     */
    protected abstract InboxFixture openFixture() throws Exception;

    @BeforeEach
    void openDatabase() throws Exception {
        fixture = openFixture();
    }

    @AfterEach
    void closeDatabase() {
        fixture.close();
    }

    /** Up to 24 deliveries over the small id alphabet; shrinks towards fewer, smaller ones. */
    private static Gen<List<Delivery>> deliveries() {
        Gen<Delivery> delivery = Generators.ids().zip(Generators.quantities(), Delivery::new);
        return lists().of(delivery).ofSizeBetween(0, 24);
    }

    /**
     * Sequential deliveries: each outcome is what a model of "first content wins" predicts; the
     * total is the sum of qty over distinct applied ids; the effect ran once per Applied; a
     * conflict never changes the total; only Applied and Duplicate are accepted.
     */
    @Test
    void sequentialDeliveriesKeepTheInvariants() {
        qt().withExamples(60).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(deliveries())
                .checkAssert(this::deliverInSequence);
    }

    private void deliverInSequence(List<Delivery> deliveries) {
        String name = Generators.uniqueName("seq");
        Stock stock = Stock.create(fixture.jdbi(), name);
        AtomicInteger effects = new AtomicInteger();
        Map<String, Long> firstQty = new HashMap<>();
        int appliedCount = 0;

        try (Inbox<Handle> inbox = fixture.builder().name(name).build()) {
            for (Delivery delivery : deliveries) {
                Long first = firstQty.get(delivery.id());
                // Read only where the model expects a Conflict: each read is a connection of its own.
                long totalBefore = first != null && first != delivery.qty() ? stock.total() : -1;
                Outcome<Integer> outcome = receive(inbox, stock, effects, delivery);

                firstQty.putIfAbsent(delivery.id(), delivery.qty());
                if (first == null) {
                    assertInstanceOf(Outcome.Applied.class, outcome);
                    appliedCount++;
                } else if (first == delivery.qty()) {
                    assertInstanceOf(Outcome.Duplicate.class, outcome);
                } else {
                    assertInstanceOf(Outcome.Conflict.class, outcome);
                    assertEquals(totalBefore, stock.total(), "a conflict never changes the total");
                }
                assertEquals(!(outcome instanceof Outcome.Conflict), outcome.isAccepted());
            }
            assertEquals(sum(firstQty), stock.total(), "total = sum of qty over distinct applied ids");
            assertEquals(appliedCount, effects.get(), "the effect ran exactly once per Applied");
            assertEquals(firstQty.size(), Stock.inboxRows(fixture, name), "one inbox row per applied id");
            assertEquals(deliveries.size(), inbox.stats().attempts());
            assertEquals(appliedCount, inbox.stats().applied());
        }
    }

    /**
     * Deliveries to an inbox that is closed and built again after a random number of them, as a
     * restarted process would: the outcomes still follow "first content wins" across the restart.
     * Afterwards a third instance finds every id with the fingerprint of its first content, and a
     * resend of the whole sequence applies nothing, runs no effect and changes no total or row.
     */
    @Test
    void reopenedInboxKeepsEveryRecord() {
        qt().withExamples(20).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(deliveries(), integers().between(0, 24))
                .checkAssert(this::deliverAcrossRestarts);
    }

    private void deliverAcrossRestarts(List<Delivery> deliveries, int restartAfter) {
        String name = Generators.uniqueName("reopen");
        Stock stock = Stock.create(fixture.jdbi(), name);
        AtomicInteger effects = new AtomicInteger();
        Map<String, Long> firstQty = new HashMap<>();
        Map<String, Outcome.Applied<Integer>> applied = new HashMap<>();
        int cut = Math.min(restartAfter, deliveries.size());

        for (List<Delivery> part : List.of(deliveries.subList(0, cut), deliveries.subList(cut, deliveries.size()))) {
            try (Inbox<Handle> inbox = fixture.builder().name(name).build()) {
                for (Delivery delivery : part) {
                    Outcome<Integer> outcome = receive(inbox, stock, effects, delivery);
                    Long first = firstQty.putIfAbsent(delivery.id(), delivery.qty());
                    Class<?> expected = first == null ? Outcome.Applied.class
                            : first == delivery.qty() ? Outcome.Duplicate.class : Outcome.Conflict.class;
                    assertEquals(expected, outcome.getClass(), "outcome of " + delivery + " (restart after " + cut + ")");
                    if (outcome instanceof Outcome.Applied<Integer> appliedNow) {
                        applied.put(delivery.id(), appliedNow);
                    }
                }
            }
        }
        long total = stock.total();
        assertEquals(sum(firstQty), total);

        try (Inbox<Handle> reopened = fixture.builder().name(name).build()) {
            for (Map.Entry<String, Long> entry : firstQty.entrySet()) {
                InboxRecord record = reopened.find(entry.getKey()).orElseThrow(
                        () -> new AssertionError("id " + entry.getKey() + " lost across the restart"));
                assertEquals(Content.of(entry.getValue()).fingerprint(), record.fingerprint());
                assertEquals(applied.get(entry.getKey()).receivedAt(), record.firstReceivedAt());
            }
            int effectsBefore = effects.get();
            for (Delivery delivery : deliveries) {
                Outcome<Integer> outcome = receive(reopened, stock, effects, delivery);
                assertEquals(firstQty.get(delivery.id()) == delivery.qty(), outcome instanceof Outcome.Duplicate,
                        "resend of " + delivery + " after the restart");
            }
            assertEquals(0, reopened.stats().applied(), "nothing is applied twice across a restart");
            assertEquals(effectsBefore, effects.get());
            assertEquals(total, stock.total());
            assertEquals(firstQty.size(), Stock.inboxRows(fixture, name), "one inbox row per applied id");
        }
    }

    /**
     * Eight threads deliver the same sequence at once, each in its own order: every id is applied
     * exactly once, with one of the quantities offered for it; every other delivery of it is a
     * Duplicate (same quantity) or a Conflict (another quantity); nothing fails.
     */
    @Test
    void concurrentDeliveriesKeepTheInvariants() {
        qt().withExamples(15).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(deliveries())
                .checkAssert(this::deliverConcurrently);
    }

    private void deliverConcurrently(List<Delivery> deliveries) {
        String name = Generators.uniqueName("par");
        Stock stock = Stock.create(fixture.jdbi(), name);
        AtomicInteger effects = new AtomicInteger();
        int threads = 8;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);

        try (Inbox<Handle> inbox = fixture.builder().name(name).build()) {
            List<Future<List<Outcome<Integer>>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                List<Delivery> order = rotated(deliveries, t);
                results.add(pool.submit(() -> {
                    start.await();
                    List<Outcome<Integer>> outcomes = new ArrayList<>();
                    for (Delivery delivery : order) {
                        outcomes.add(receive(inbox, stock, effects, delivery));
                    }
                    return outcomes;
                }));
            }
            Map<String, Long> appliedQty = new LinkedHashMap<>();
            List<Map.Entry<Delivery, Outcome<Integer>>> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                List<Outcome<Integer>> outcomes = Concurrency.get(results.get(t));
                for (int i = 0; i < outcomes.size(); i++) {
                    Delivery delivery = rotated(deliveries, t).get(i);
                    all.add(Map.entry(delivery, outcomes.get(i)));
                    if (outcomes.get(i).isNewlyApplied()) {
                        Long previous = appliedQty.put(delivery.id(), delivery.qty());
                        assertNull(previous, "id " + delivery.id() + " applied twice");
                    }
                }
            }
            for (Map.Entry<Delivery, Outcome<Integer>> entry : all) {
                Outcome<Integer> outcome = entry.getValue();
                if (!outcome.isNewlyApplied()) {
                    boolean sameQty = entry.getKey().qty() == appliedQty.get(entry.getKey().id());
                    Class<?> expected = sameQty ? Outcome.Duplicate.class : Outcome.Conflict.class;
                    assertEquals(expected, outcome.getClass(), "outcome for " + entry.getKey());
                }
            }
            long distinctIds = deliveries.stream().map(Delivery::id).distinct().count();
            assertEquals(distinctIds, appliedQty.size(), "every id applied exactly once");
            assertEquals(sum(appliedQty), stock.total());
            assertEquals(appliedQty.size(), effects.get());
            assertEquals((long) threads * deliveries.size(), inbox.stats().attempts());
            assertEquals(0, inbox.stats().failed() + inbox.stats().busy(), "no delivery failed");
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Batches through {@code applyAll}, one after another, where a random third of the effects
     * throw: one result per message, in order; a message is judged against everything committed
     * before it, earlier messages of its own batch included ("first content wins"); a message whose
     * effect throws fails alone with that very exception and records nothing, so a later message
     * of the id may still apply; the total grows by the quantities of the batch's Applied results
     * only, so a Conflict never changes it; overall it is the sum of qty over distinct applied ids.
     */
    @Test
    void batchesKeepTheInvariants() {
        Gen<List<List<Attempt>>> batches = lists().of(lists().of(Generators.attempts()).ofSizeBetween(0, 8))
                .ofSizeBetween(1, 6);
        qt().withExamples(30).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(batches)
                .checkAssert(this::applyBatches);
    }

    private void applyBatches(List<List<Attempt>> batches) {
        String name = Generators.uniqueName("batch");
        Stock stock = Stock.create(fixture.jdbi(), name);
        AtomicInteger effects = new AtomicInteger();
        Map<String, Long> firstQty = new HashMap<>();
        int appliedCount = 0;
        int failedCount = 0;

        try (Inbox<Handle> inbox = fixture.builder().name(name).build()) {
            for (List<Attempt> batch : batches) {
                // The effect is handed the Message it runs for; identity tells two equal messages apart.
                Map<Message, Attempt> planned = new IdentityHashMap<>();
                Map<Message, PlannedFailure> failures = new IdentityHashMap<>();
                List<Message> messages = new ArrayList<>();
                for (Attempt attempt : batch) {
                    Message message = Message.of(attempt.id(), Content.of(attempt.qty()));
                    planned.put(message, attempt);
                    failures.put(message, new PlannedFailure(attempt));
                    messages.add(message);
                }
                long totalBefore = stock.total();

                List<MessageResult<Integer>> results = inbox.applyAll(messages, (tx, message) -> {
                    if (planned.get(message).effectFails()) {
                        throw failures.get(message);
                    }
                    effects.incrementAndGet();
                    return stock.add(tx, planned.get(message).qty());
                });

                assertEquals(messages.size(), results.size(), "one result per message");
                long appliedInBatch = 0;
                for (int i = 0; i < messages.size(); i++) {
                    Message message = messages.get(i);
                    Attempt attempt = planned.get(message);
                    MessageResult<Integer> result = results.get(i);
                    assertSame(message, result.message(), "results in the order of the messages");
                    Long first = firstQty.get(attempt.id());
                    if (first == null && attempt.effectFails()) {
                        assertSame(failures.get(message), result.failure().orElse(null),
                                "the effect's own exception, for " + attempt);
                        failedCount++;
                        continue;
                    }
                    Outcome<Integer> outcome = result.outcome().orElseThrow(
                            () -> new AssertionError(attempt + " failed: " + result.failure().orElseThrow()));
                    if (first == null) {
                        assertInstanceOf(Outcome.Applied.class, outcome, attempt.toString());
                        firstQty.put(attempt.id(), attempt.qty());
                        appliedInBatch += attempt.qty();
                        appliedCount++;
                    } else {
                        Class<?> expected = first == attempt.qty() ? Outcome.Duplicate.class : Outcome.Conflict.class;
                        assertEquals(expected, outcome.getClass(), attempt.toString());
                    }
                }
                assertEquals(totalBefore + appliedInBatch, stock.total(),
                        "the batch adds the quantities of its Applied results, nothing for a Conflict or a failure");
            }
            assertEquals(sum(firstQty), stock.total(), "total = sum of qty over distinct applied ids");
            assertEquals(appliedCount, effects.get(), "the effect completed exactly once per Applied");
            assertEquals(firstQty.size(), Stock.inboxRows(fixture, name), "one inbox row per applied id");
            assertEquals(appliedCount, inbox.stats().applied());
            assertEquals(failedCount, inbox.stats().failed());
            assertEquals(0, inbox.stats().busy());
        }
    }

    private static Outcome<Integer> receive(Inbox<Handle> inbox, Stock stock, AtomicInteger effects, Delivery delivery) {
        return inbox.apply(delivery.id(), Content.of(delivery.qty()), tx -> {
            effects.incrementAndGet();
            return stock.add(tx, delivery.qty());
        });
    }

    private static long sum(Map<String, Long> quantities) {
        return quantities.values().stream().mapToLong(Long::longValue).sum();
    }

    /** The sequence as thread {@code t} delivers it: rotated by {@code t}. */
    private static List<Delivery> rotated(List<Delivery> deliveries, int t) {
        List<Delivery> order = new ArrayList<>(deliveries);
        Collections.rotate(order, t);
        return order;
    }
}
