package dev.idempotent.inbox.examples.http;

import dev.idempotent.inbox.RetentionStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * The receiver's counters since it started. Requests and applied effects are counted apart, so
 * that "2 requests, 1 business" shows at a glance.
 */
public final class ReceiverMetrics {

    private final Map<RequestOutcome, LongAdder> requests = new EnumMap<>(RequestOutcome.class);
    private final LongAdder acksDropped = new LongAdder();

    ReceiverMetrics() {
        for (RequestOutcome outcome : RequestOutcome.values()) {
            requests.put(outcome, new LongAdder());
        }
    }

    void count(RequestOutcome outcome) {
        requests.get(outcome).increment();
    }

    void ackDropped() {
        acksDropped.increment();
    }

    /** Requests to {@code /receipts} that ended with {@code outcome}. */
    public long requests(RequestOutcome outcome) {
        return requests.get(outcome).sum();
    }

    /** Every request to {@code /receipts}. */
    public long requests() {
        long sum = 0;
        for (LongAdder adder : requests.values()) {
            sum += adder.sum();
        }
        return sum;
    }

    /** Stock changes committed: requests that applied a new shipment. */
    public long appliedEffects() {
        return requests(RequestOutcome.APPLIED);
    }

    /** Responses the fault switch dropped after the commit. */
    public long acksDropped() {
        return acksDropped.sum();
    }

    /**
     * The counters, the given stock and the inbox's retention figures in the Prometheus text
     * format, version 0.0.4. A gauge without a value (no horizon yet, an empty inbox) is left
     * out rather than written as 0, which would read as "purged at 1970" or "a row of age 0".
     */
    String prometheus(long total, long receipts, RetentionStatus retention) {
        StringBuilder text = new StringBuilder();
        text.append("# HELP warehouse_requests_total Requests to /receipts, by outcome.\n");
        text.append("# TYPE warehouse_requests_total counter\n");
        for (RequestOutcome outcome : RequestOutcome.values()) {
            text.append("warehouse_requests_total{outcome=\"").append(outcome.label()).append("\"} ")
                    .append(requests(outcome)).append('\n');
        }
        metric(text, "warehouse_applied_effects_total", "counter", "Stock changes committed by this receiver.", appliedEffects());
        metric(text, "warehouse_acks_dropped_total", "counter", "Responses dropped after the commit by the fault switch.", acksDropped());
        metric(text, "warehouse_stock_total", "gauge", "The committed stock total.", total);
        metric(text, "warehouse_receipts", "gauge", "Distinct shipments received: the inbox's rows.", receipts);
        metric(text, "warehouse_inbox_rows_purged_total", "counter",
                "Inbox rows deleted by purges of this receiver.", retention.rowsPurged());
        metric(text, "warehouse_stale_refusals_total", "counter",
                "New shipments refused because their origin time is before the horizon.", retention.staleRefusals());
        if (retention.horizon().isPresent()) {
            Instant horizon = retention.horizon().get();
            metric(text, "warehouse_inbox_horizon_seconds", "gauge",
                    "The receive time before which inbox rows may have been purged, in epoch seconds.",
                    horizon.getEpochSecond());
        }
        if (retention.oldestRowAge().isPresent()) {
            Duration age = retention.oldestRowAge().get();
            metric(text, "warehouse_inbox_oldest_row_age_seconds", "gauge", "The age of the oldest inbox row.",
                    age.toSeconds());
        }
        return text.toString();
    }

    private static void metric(StringBuilder text, String name, String type, String help, long value) {
        text.append("# HELP ").append(name).append(' ').append(help).append('\n');
        text.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        text.append(name).append(' ').append(value).append('\n');
    }
}
