package dev.idempotent.inbox.examples;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * What {@code consume} did since it started, whatever the broker: deliveries that conflicted with
 * an earlier business or were rejected (the inbox's own counters give applied and duplicate), and
 * when the last one was settled.
 */
final class ConsumeCounters {

    private final LongAdder conflicts = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final AtomicReference<Instant> lastSettled = new AtomicReference<>();

    void conflict() {
        conflicts.increment();
    }

    void reject() {
        rejected.increment();
    }

    void settled(Instant when) {
        lastSettled.set(when);
    }

    long conflicts() {
        return conflicts.sum();
    }

    long rejected() {
        return rejected.sum();
    }

    /** When deliveries were last settled, or {@code null} before the first. */
    Instant lastSettled() {
        return lastSettled.get();
    }

    /** The counters, the inbox's and the stock in the Prometheus text format, version 0.0.4. */
    String prometheus(Warehouse warehouse) {
        StockLevel stock = warehouse.stock();
        StringBuilder text = new StringBuilder();
        metric(text, "warehouse_consumed_applied_total", "counter", "Receipts applied by this consumer.",
                warehouse.stats().applied());
        metric(text, "warehouse_consumed_duplicates_total", "counter", "Redelivered receipts answered as duplicates.",
                warehouse.stats().duplicates());
        metric(text, "warehouse_consumed_conflicts_total", "counter",
                "Receipts whose id was applied earlier with other content.", conflicts());
        metric(text, "warehouse_consumed_rejected_total", "counter", "Receipts that could not be applied and were skipped.",
                rejected());
        metric(text, "warehouse_stock_total", "gauge", "The committed stock total.", stock.total());
        metric(text, "warehouse_receipts", "gauge", "Distinct shipments received: the inbox's rows.", stock.receipts());
        return text.toString();
    }

    private static void metric(StringBuilder text, String name, String type, String help, long value) {
        text.append("# HELP ").append(name).append(' ').append(help).append('\n');
        text.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        text.append(name).append(' ').append(value).append('\n');
    }
}
