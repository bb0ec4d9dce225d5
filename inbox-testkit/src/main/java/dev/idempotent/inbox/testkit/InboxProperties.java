package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;
import org.jdbi.v3.core.Handle;

/**
 * The invariants every adapter keeps, checked by jqwik over random delivery sequences against a
 * real database. Ids come from a small alphabet and quantities from a small range, so duplicates
 * and conflicts are frequent. Each try works under an inbox name and a stock row of its own.
 */
public abstract class InboxProperties {

    /** One delivery: an id and the quantity it claims. */
    public record Delivery(String id, long qty) {}

    private static final AtomicInteger TRIES = new AtomicInteger();

    private InboxFixture fixture;

    /**
     * A fixture over a fresh, real database; closed after each property.
     *
     * @return the fixture
     * @throws Exception if the database cannot be prepared; the property fails
     */
    protected abstract InboxFixture openFixture() throws Exception;

    @BeforeProperty
    void openDatabase() throws Exception {
        fixture = openFixture();
    }

    @AfterProperty
    void closeDatabase() {
        fixture.close();
    }

    @Provide
    Arbitrary<List<Delivery>> deliveries() {
        Arbitrary<String> ids = Arbitraries.of("m-0", "m-1", "m-2", "m-3");
        Arbitrary<Long> quantities = Arbitraries.longs().between(1, 3);
        return Combinators.combine(ids, quantities).as(Delivery::new).list().ofMaxSize(24);
    }

    /**
     * Sequential deliveries: each outcome is what a model of "first content wins" predicts; the
     * total is the sum of qty over distinct applied ids; the effect ran once per Applied; a
     * conflict never changes the total; only Applied and Duplicate are accepted.
     */
    @Property(tries = 60)
    void sequentialDeliveriesKeepTheInvariants(@ForAll("deliveries") List<Delivery> deliveries) {
        String name = "seq-" + TRIES.incrementAndGet();
        Stock stock = Stock.create(fixture.jdbi(), name);
        AtomicInteger effects = new AtomicInteger();
        Map<String, Long> firstQty = new HashMap<>();
        int appliedCount = 0;

        try (Inbox<Handle> inbox = fixture.builder().name(name).build()) {
            for (Delivery delivery : deliveries) {
                long totalBefore = stock.total();
                Outcome<Integer> outcome = inbox.apply(delivery.id(), Content.of(delivery.qty()), tx -> {
                    effects.incrementAndGet();
                    return stock.add(tx, delivery.qty());
                });

                Long first = firstQty.putIfAbsent(delivery.id(), delivery.qty());
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
            long expected = firstQty.values().stream().mapToLong(Long::longValue).sum();
            assertEquals(expected, stock.total(), "total = sum of qty over distinct applied ids");
            assertEquals(appliedCount, effects.get(), "the effect ran exactly once per Applied");
            assertEquals(firstQty.size(), Stock.inboxRows(fixture.jdbi(), name));
            assertEquals(deliveries.size(), inbox.stats().attempts());
            assertEquals(appliedCount, inbox.stats().applied());
        }
    }

    /**
     * Eight threads deliver the same sequence at once, each in its own order: every id is applied
     * exactly once, with one of the quantities offered for it; every other delivery of it is a
     * Duplicate (same quantity) or a Conflict (another quantity); nothing fails.
     */
    @Property(tries = 15)
    void concurrentDeliveriesKeepTheInvariants(@ForAll("deliveries") List<Delivery> deliveries) throws Exception {
        String name = "par-" + TRIES.incrementAndGet();
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
                        outcomes.add(inbox.apply(delivery.id(), Content.of(delivery.qty()), tx -> {
                            effects.incrementAndGet();
                            return stock.add(tx, delivery.qty());
                        }));
                    }
                    return outcomes;
                }));
            }
            Map<String, Long> appliedQty = new LinkedHashMap<>();
            List<Map.Entry<Delivery, Outcome<Integer>>> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                List<Outcome<Integer>> outcomes = results.get(t).get(120, TimeUnit.SECONDS);
                for (int i = 0; i < outcomes.size(); i++) {
                    Delivery delivery = rotated(deliveries, t).get(i);
                    all.add(Map.entry(delivery, outcomes.get(i)));
                    if (outcomes.get(i).isNewlyApplied()) {
                        Long previous = appliedQty.put(delivery.id(), delivery.qty());
                        assertEquals(null, previous, "id " + delivery.id() + " applied twice");
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
            assertEquals(appliedQty.values().stream().mapToLong(Long::longValue).sum(), stock.total());
            assertEquals(appliedQty.size(), effects.get());
            assertEquals((long) threads * deliveries.size(), inbox.stats().attempts());
            assertEquals(0, inbox.stats().failed() + inbox.stats().busy(), "no delivery failed");
        } finally {
            pool.shutdownNow();
        }
    }

    /** The sequence as thread {@code t} delivers it: rotated by {@code t}. */
    private static List<Delivery> rotated(List<Delivery> deliveries, int t) {
        List<Delivery> order = new ArrayList<>(deliveries);
        Collections.rotate(order, t);
        return order;
    }
}
