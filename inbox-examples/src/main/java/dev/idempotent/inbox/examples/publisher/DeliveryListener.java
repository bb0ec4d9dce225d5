package dev.idempotent.inbox.examples.publisher;

/**
 * Observes a delivery run. Called on the publisher's worker threads; must be thread-safe and
 * quick. {@link #onAttempt} fires after the attempt's result was committed to the outbox;
 * {@link #onVerifiedAck} fires in the gap between a verified ACK and its completion mark.
 */
@FunctionalInterface
public interface DeliveryListener {

    /** The listener that does nothing. */
    DeliveryListener NONE = attempt -> {};

    /** One attempt ended and its result is recorded. */
    void onAttempt(Attempt attempt);

    /**
     * A verified ACK for {@code id} arrived and its completion mark is not written yet: the
     * receiver has the item, the outbox still says pending. A publisher that dies here resends the
     * item on its next run and gets it confirmed as a duplicate. {@link #onAttempt} follows once the
     * mark is committed. Does nothing unless overridden.
     *
     * @param id the item's business id
     * @param applied whether the receiver said it applied the item with this attempt
     */
    default void onVerifiedAck(String id, boolean applied) {}
}
