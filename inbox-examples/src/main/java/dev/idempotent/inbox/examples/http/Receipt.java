package dev.idempotent.inbox.examples.http;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One shipment as the protocol carries it:
 * {@code {"id": "snack-7", "qty": 7, "origin": "2026-01-05T10:00:00.123Z"}}.
 *
 * @param id the business id
 * @param qty how many items arrived, at least 1
 * @param origin when the sender first created the shipment, the same on every resend; empty when
 *     the request carried none
 */
public record Receipt(String id, int qty, Optional<Instant> origin) {
    public Receipt {
        Objects.requireNonNull(id, "id");
        if (qty < 1) {
            throw new IllegalArgumentException("qty must be at least 1, was " + qty);
        }
        Objects.requireNonNull(origin, "origin");
    }

    /** A shipment without an origin time. */
    public Receipt(String id, int qty) {
        this(id, qty, Optional.empty());
    }
}
