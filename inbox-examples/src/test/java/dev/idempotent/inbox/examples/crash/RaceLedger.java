package dev.idempotent.inbox.examples.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.crash.ReceiverProcess.Kind;
import dev.idempotent.inbox.examples.crash.StockView.Snapshot;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Every delivery of a race and what it returned, and the race's invariants: per id exactly one
 * APPLIED; every other delivery a DUPLICATE if it offered the applied quantity and a CONFLICT if
 * not; no failure; and the committed total equal to the sum of the applied quantities.
 */
final class RaceLedger {

    /** One delivery: who offered which quantity for which id, and what came back. */
    record Delivery(String deliverer, String id, long qty, Kind kind) {}

    private final ConcurrentLinkedQueue<Delivery> deliveries = new ConcurrentLinkedQueue<>();

    void add(String deliverer, String id, long qty, Kind kind) {
        deliveries.add(new Delivery(deliverer, id, qty, kind));
    }

    /**
     * Checks the invariants against {@code committed}, read through an independent connection,
     * and returns the counts in one line.
     *
     * @param effectRuns how often the effect ran, or -1 when it ran in other processes
     */
    String verify(Snapshot committed, int expectedIds, long effectRuns) {
        Map<String, List<Delivery>> byId = new TreeMap<>();
        deliveries.forEach(delivery -> byId.computeIfAbsent(delivery.id(), id -> new ArrayList<>()).add(delivery));
        Map<Kind, Integer> counts = new EnumMap<>(Kind.class);
        for (Kind kind : Kind.values()) {
            counts.put(kind, 0);
        }
        deliveries.forEach(delivery -> counts.merge(delivery.kind(), 1, Integer::sum));

        List<String> wrong = new ArrayList<>();
        long appliedQty = 0;
        for (Map.Entry<String, List<Delivery>> entry : byId.entrySet()) {
            List<Delivery> applied = entry.getValue().stream().filter(d -> d.kind() == Kind.APPLIED).toList();
            if (applied.size() != 1) {
                wrong.add(entry.getKey() + " applied " + applied.size() + " times: " + entry.getValue());
                continue;
            }
            long winner = applied.get(0).qty();
            appliedQty += winner;
            for (Delivery other : entry.getValue()) {
                Kind expected = other.kind() == Kind.APPLIED ? Kind.APPLIED
                        : other.qty() == winner ? Kind.DUPLICATE : Kind.CONFLICT;
                if (other.kind() != expected) {
                    wrong.add(other + " should be " + expected + " (applied qty " + winner + ")");
                }
            }
        }
        String line = String.format("%d deliveries of %d ids: %d applied, %d duplicate, %d conflict, %d failed;%s"
                        + " total %d, sum of applied qty %d; inbox rows %d",
                deliveries.size(), byId.size(), counts.get(Kind.APPLIED), counts.get(Kind.DUPLICATE),
                counts.get(Kind.CONFLICT), counts.get(Kind.FAILED),
                effectRuns >= 0 ? " effect ran " + effectRuns + " times;" : "", committed.total(), appliedQty,
                committed.rows());

        assertTrue(wrong.isEmpty(), () -> line + "\n" + String.join("\n", wrong));
        assertEquals(expectedIds, byId.size(), "ids delivered");
        assertEquals(expectedIds, counts.get(Kind.APPLIED).intValue(), "exactly one APPLIED per id");
        assertEquals(0, counts.get(Kind.FAILED).intValue(), "failures");
        assertEquals(appliedQty, committed.total(), "total == sum of qty over distinct applied ids");
        assertEquals(expectedIds, committed.rows(), "one inbox row per id");
        if (effectRuns >= 0) {
            assertEquals(counts.get(Kind.APPLIED).longValue(), effectRuns, "the effect runs once per APPLIED");
        }
        return line;
    }
}
