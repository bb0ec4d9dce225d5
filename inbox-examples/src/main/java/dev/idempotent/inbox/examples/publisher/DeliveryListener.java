package dev.idempotent.inbox.examples.publisher;

/**
 * Observes a delivery run. Called on the publisher's worker threads, after the attempt's result
 * was committed to the outbox; must be thread-safe and quick.
 */
@FunctionalInterface
public interface DeliveryListener {

    /** The listener that does nothing. */
    DeliveryListener NONE = attempt -> {};

    /** One attempt ended and its result is recorded. */
    void onAttempt(Attempt attempt);
}
