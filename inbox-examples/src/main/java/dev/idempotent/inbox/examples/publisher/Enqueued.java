package dev.idempotent.inbox.examples.publisher;

/** What {@link Outbox#enqueue} did with one item. */
public enum Enqueued {
    /** The id was new; the item is pending. */
    ADDED,
    /** The id was enqueued before with the same quantity; nothing changed. */
    ALREADY_ENQUEUED,
    /** The id was enqueued before with another quantity; refused, the earlier item is kept. */
    REFUSED_OTHER_QTY
}
