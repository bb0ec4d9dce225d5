package dev.idempotent.inbox.examples.publisher;

import java.time.Instant;
import java.util.Objects;

/**
 * One item of the outbox as stored.
 *
 * @param seq the enqueue order
 * @param id the business id
 * @param qty the quantity
 * @param state where it stands
 * @param attempts attempts whose result was recorded
 * @param reason why it was rejected or exhausted, or the last uncertain attempt's reason; may be
 *     {@code null}
 * @param origin the origin time: when the item was first enqueued, sent with every attempt
 */
public record OutboxItem(long seq, String id, int qty, ItemState state, int attempts, String reason, Instant origin) {
    public OutboxItem {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(origin, "origin");
    }
}
