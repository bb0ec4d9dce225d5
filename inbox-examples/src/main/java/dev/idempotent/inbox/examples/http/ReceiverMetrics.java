package dev.idempotent.inbox.examples.http;

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

    /** The counters and the given stock in the Prometheus text format, version 0.0.4. */
    String prometheus(long total, long receipts) {
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
        return text.toString();
    }

    private static void metric(StringBuilder text, String name, String type, String help, long value) {
        text.append("# HELP ").append(name).append(' ').append(help).append('\n');
        text.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        text.append(name).append(' ').append(value).append('\n');
    }
}
