package dev.idempotent.inbox.examples.publisher;

import java.util.Locale;

/** Where an outbox item stands. Only {@link #PENDING} items are sent. */
public enum ItemState {
    /** Not yet confirmed: sent on the next delivery run, in enqueue order. */
    PENDING,
    /** The completion mark: a verified ACK came back. */
    ACKED,
    /** The receiver refused it definitely (conflict, bad request, ...); never sent again. */
    REJECTED,
    /** Every allowed attempt ended uncertain; kept for an operator, never dropped. */
    EXHAUSTED;

    String column() {
        return name().toLowerCase(Locale.ROOT);
    }

    static ItemState ofColumn(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
