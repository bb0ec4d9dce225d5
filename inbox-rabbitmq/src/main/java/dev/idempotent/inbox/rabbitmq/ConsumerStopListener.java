package dev.idempotent.inbox.rabbitmq;

import dev.idempotent.inbox.Beta;

/**
 * Told when a {@link RabbitInboxConsumer} stops of its own accord, that is, other than by
 * {@link RabbitInboxConsumer#close}. When it is called the consumer's channel is closed, every
 * delivery it had not settled is back in the queue, and {@link RabbitInboxConsumer#isOpen} answers
 * {@code false}; the connection and the inbox stay open. A consumer stops of its own accord when:
 *
 * <ul>
 *   <li>an effect (or the content decoder, or the {@link MessageIdSource}) threw an {@link Error},
 *       such as an {@link AssertionError} or an {@link OutOfMemoryError}. The delivery it was
 *       applying was rejected without requeue (the queue's dead-letter exchange takes it), so that it
 *       cannot stop the next consumer it reaches; the deliveries applied before it in the same batch
 *       were committed and acked. {@code cause} is the error, unchanged. An error a batch threw that
 *       none of its messages threw again when applied alone stops the consumer too, after each
 *       message was settled as it went alone.</li>
 *   <li>the broker cancelled the consumer (the queue was deleted, or moved to another node) and
 *       the queue did not come back within {@link RabbitInboxConsumer.Builder#resubscribeWithin}.
 *       {@code cause} is an {@link java.io.IOException} that says so.</li>
 *   <li>the broker closed the consumer's channel with a channel error, as it does for a delivery
 *       left unacked past its {@code consumer_timeout}; the client recovers lost connections, not
 *       channels closed this way. {@code cause} is the client's
 *       {@link com.rabbitmq.client.ShutdownSignalException}, whose reason the broker gave.</li>
 *   <li>the consumer's own thread failed. {@code cause} is what it threw.</li>
 * </ul>
 *
 * <p>What to do is the application's: start a new consumer (an error an effect threw for one
 * message will not meet it again), mark the service unhealthy, or stop the process, as is usual
 * after an {@link OutOfMemoryError}. The consumer has logged the cause at ERROR or WARN already.
 */
@Beta
@FunctionalInterface
public interface ConsumerStopListener {

    /**
     * Called once, on the consumer's own thread, after its channel was closed. An exception thrown
     * here is logged and ignored. Calling {@link RabbitInboxConsumer#close} from here is allowed
     * and does nothing.
     *
     * @param consumer the consumer that stopped
     * @param cause why it stopped; never {@code null}
     */
    void stopped(RabbitInboxConsumer consumer, Throwable cause);
}
