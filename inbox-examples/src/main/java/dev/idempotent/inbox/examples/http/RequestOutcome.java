package dev.idempotent.inbox.examples.http;

import java.util.Locale;

/** How the receiver ended one request to {@code /receipts}, as the metrics count it. */
public enum RequestOutcome {
    /** The shipment was new and is now applied. */
    APPLIED,
    /** The shipment was applied earlier with the same quantity; acknowledged again. */
    DUPLICATE,
    /** The id was applied earlier with another quantity; refused, nothing changed. */
    CONFLICT,
    /**
     * The shipment was new, but its origin time is before what the warehouse still remembers;
     * refused, nothing changed, an operator should look at it.
     */
    STALE,
    /** The request was refused before the inbox was asked: bad body, type, size, method or token. */
    INVALID,
    /** The write lock was not obtained in time; nothing changed, the sender should retry. */
    BUSY,
    /** The database failed; nothing was acknowledged. */
    FAILED;

    /** The lower-case label used in logs and metrics. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
