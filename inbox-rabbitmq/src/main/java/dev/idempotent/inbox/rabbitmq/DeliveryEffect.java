package dev.idempotent.inbox.rabbitmq;

/**
 * The business change a {@link RabbitInboxConsumer} applies once per id, inside the inbox's
 * transaction (a savepoint of the batch's transaction, when deliveries are batched).
 *
 * @param <H> the transaction handle of the inbox
 * @param <T> the decoded value's type
 */
@FunctionalInterface
public interface DeliveryEffect<H, T> {

    /**
     * Applies one delivery's business change.
     *
     * @param tx the open transaction; every write of the change goes through it
     * @param id the delivery's business id
     * @param value what the {@link ContentDecoder} decoded; may be {@code null}
     * @throws Exception rolls back this delivery alone; the delivery is requeued until the
     *     consumer's attempt limit, then dead-lettered (see {@link RabbitInboxConsumer}); an
     *     {@link Error} dead-letters the delivery at once and stops the consumer (see
     *     {@link ConsumerStopListener})
     */
    void apply(H tx, String id, T value) throws Exception;
}
