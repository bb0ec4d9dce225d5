package dev.idempotent.inbox.examples.http;

import java.util.Objects;

/**
 * One shipment as the protocol carries it: {@code {"id": "snack-7", "qty": 7}}.
 *
 * @param id the business id
 * @param qty how many items arrived, at least 1
 */
public record Receipt(String id, int qty) {
    public Receipt {
        Objects.requireNonNull(id, "id");
        if (qty < 1) {
            throw new IllegalArgumentException("qty must be at least 1, was " + qty);
        }
    }
}
