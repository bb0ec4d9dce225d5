package dev.idempotent.inbox.rabbitmq;

/** What the broker is told about one delivery, decided after the transaction has ended. */
enum Verdict {
    /** Committed (applied now or before): ack. */
    ACK,
    /** Will never apply as it is: reject without requeue, so the queue's dead-letter exchange takes it. */
    DEAD_LETTER,
    /** Not applied, and a later attempt may succeed: nack with requeue, after the backoff. */
    REQUEUE
}
