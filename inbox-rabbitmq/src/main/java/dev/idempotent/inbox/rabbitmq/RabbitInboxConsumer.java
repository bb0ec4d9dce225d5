package dev.idempotent.inbox.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Inbox;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes a RabbitMQ queue through an {@link Inbox}: each delivery's id comes from a
 * {@link MessageIdSource} (the {@code message-id} property by default), its content from the body
 * through a {@link ContentDecoder}; the effect runs once per id in the inbox's transaction, and the
 * delivery is acknowledged only after that transaction has committed.
 *
 * <pre>{@code
 * RabbitInboxConsumer consumer = RabbitInboxConsumer
 *         .builder(inbox, "receipts", ContentDecoder.bytes(), (tx, id, body) ->
 *                 tx.execute("UPDATE stock SET total = total + ?", quantity(body)))
 *         .batchSize(100)
 *         .start(connection);
 * }</pre>
 *
 * <p>What the broker is told, and when, relative to the commit:
 *
 * <table>
 *   <caption>Outcomes and failures, and what the broker is told</caption>
 *   <tr><th>Outcome or failure</th><th>Broker</th><th>When</th></tr>
 *   <tr><td>Applied, Duplicate</td><td>ack</td><td>after the commit</td></tr>
 *   <tr><td>Conflict; stale ({@link dev.idempotent.inbox.StaleMessageException}); no id; a body
 *       the decoder refuses; an effect that broke its transaction; any other
 *       {@link dev.idempotent.inbox.FailureKind#PERMANENT} failure of the message</td><td>reject, no requeue: the queue's dead-letter exchange takes it</td>
 *       <td>after the transaction ended (nothing of it was written)</td></tr>
 *   <tr><td>{@link dev.idempotent.inbox.FailureKind#RETRYABLE}: busy, a lock not obtained within
 *       the inbox's lock timeout (in the effect's own statements too), deadlock, outcome unknown,
 *       database unreachable</td><td>nack with requeue, never counted as an attempt of the effect
 *       (on a quorum queue, these returns are taken off {@code x-delivery-count})</td>
 *       <td>after the retry backoff</td></tr>
 *   <tr><td>the inbox cannot apply anything: the database is read-only, damaged or of a newer
 *       schema, or the inbox is closed (permanent, but not the message's fault)</td>
 *       <td>nack with requeue, logged at WARN</td><td>after the retry backoff</td></tr>
 *   <tr><td>{@link dev.idempotent.inbox.FailureKind#EFFECT}: the effect's own exception</td>
 *       <td>nack with requeue, up to {@link Builder#maxEffectAttempts} attempts, then reject
 *       without requeue</td><td>after the retry backoff; the last at once</td></tr>
 *   <tr><td>a batch whose transaction failed as a whole for a reason that is not retryable (a
 *       deferred constraint checked at COMMIT, an effect that broke the transaction)</td>
 *       <td>its messages are applied again one at a time, each in a transaction of its own; then
 *       as the rows above, for each. No message's attempt is counted for the batch's failure</td>
 *       <td>after each one's commit</td></tr>
 *   <tr><td>an {@link Error} thrown by the effect, the decoder or the {@link MessageIdSource}</td>
 *       <td>reject, no requeue, for that delivery (so it cannot stop the next consumer); the
 *       deliveries committed before it are acked, the rest nacked with requeue; then the consumer
 *       stops and tells its {@link ConsumerStopListener}. A batch's error that no message throws
 *       again alone: each settled as it went alone, then the consumer stops the same way</td>
 *       <td>after the transaction ended</td></tr>
 *   <tr><td>the broker cancels the consumer (queue deleted or moved)</td><td>deliveries taken
 *       are settled as usual; the consumer consumes again once the queue exists, or stops and tells
 *       its {@link ConsumerStopListener} after {@link Builder#resubscribeWithin}</td><td>-</td></tr>
 *   <tr><td>the broker closes the channel with a channel error (a delivery unacked past its
 *       {@code consumer_timeout}), which the client does not recover</td><td>nothing more can be
 *       sent; the broker requeues every unacked delivery. The consumer stops and tells its
 *       {@link ConsumerStopListener}</td><td>-</td></tr>
 *   <tr><td>channel or connection lost</td><td>nothing: the broker requeues every unacked
 *       delivery; committed ones come back as duplicates and are acked then</td><td>-</td></tr>
 * </table>
 *
 * <p>A crash of the consumer's process before the commit leaves nothing applied and the delivery
 * unacked (redelivered); between the commit and the ack it leaves the business applied and the
 * delivery unacked (redelivered, answered Duplicate, acked). No delivery is ever acked before its
 * commit, so none is lost.
 *
 * <p>The consumer opens a channel of its own on the connection and uses it from one thread only,
 * its worker, which applies deliveries in the order they arrive. With automatic recovery (the
 * client's default), consuming resumes on the recovered channel. Thread-safe; {@link #close}
 * stops it.
 */
@Beta
public final class RabbitInboxConsumer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RabbitInboxConsumer.class);
    private static final Duration STOP_WAIT = Duration.ofSeconds(30);

    private final String queue;
    private final Channel channel;
    private final BatchApplier<?, ?> applier;
    private final DeliveryWorker worker;
    private final Thread thread;
    private final String consumerTag;

    private RabbitInboxConsumer(String queue, Channel channel, BatchApplier<?, ?> applier, DeliveryWorker worker,
            Thread thread, String consumerTag) {
        this.queue = queue;
        this.channel = channel;
        this.applier = applier;
        this.worker = worker;
        this.thread = thread;
        this.consumerTag = consumerTag;
    }

    /**
     * A builder for a consumer of {@code queue}, with the required parts; the settings have
     * defaults (see {@link Builder}).
     *
     * @param <H> the inbox's transaction handle
     * @param <T> the decoded value's type
     * @param inbox the inbox deliveries are applied through; the consumer does not close it
     * @param queue the queue to consume; it must exist
     * @param decoder turns a body into inbox content and the effect's value
     * @param effect the business change, run once per id in the inbox's transaction
     * @return the builder
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if {@code queue} is blank
     */
    public static <H, T> Builder<H, T> builder(Inbox<H> inbox, String queue, ContentDecoder<T> decoder,
            DeliveryEffect<H, T> effect) {
        Objects.requireNonNull(inbox, "inbox");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(decoder, "decoder");
        Objects.requireNonNull(effect, "effect");
        if (queue.isBlank()) {
            throw new IllegalArgumentException("queue must not be blank");
        }
        return new Builder<>(inbox, queue, decoder, effect, MessageIdSource.messageId(), Builder.DEFAULT_PREFETCH,
                Builder.DEFAULT_BATCH_SIZE, Builder.DEFAULT_BATCH_LINGER, Builder.DEFAULT_MAX_EFFECT_ATTEMPTS,
                Builder.DEFAULT_RETRY_BACKOFF, Builder.DEFAULT_RESUBSCRIBE_WITHIN, (consumer, cause) -> { });
    }

    /** {@return the queue this consumer consumes} */
    public String queue() {
        return queue;
    }

    /** {@return the consumer tag the broker knows this consumer by}; kept when it resubscribes */
    public String consumerTag() {
        return consumerTag;
    }

    /** {@return what this consumer did since it started}; cheap, never blocks */
    public ConsumerStats stats() {
        return new ConsumerStats(applier.applied.sum(), applier.duplicates.sum(), worker.acked.sum(),
                worker.deadLettered.sum(), worker.requeued.sum());
    }

    /**
     * Stops consuming: the batch being applied is committed and settled, then the consumer is
     * cancelled and its channel closed, which returns every delivery taken but not applied to the
     * queue. A failed batch being applied one message at a time stops after the message in hand;
     * its untried messages go back to the queue. Waits up to 30 seconds for the batch; the connection and the inbox stay open.
     * Calling it again does nothing.
     */
    @Override
    public void close() {
        worker.requestStop();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(STOP_WAIT.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * {@return whether the consumer is running}: its channel is open and it has not stopped. False
     * after {@link #close}, and after it stopped of its own accord (see
     * {@link ConsumerStopListener}); true while the channel recovers from a lost connection, and
     * while a consumer the broker cancelled waits for its queue to come back.
     */
    public boolean isOpen() {
        return !worker.stopped() && channel.isOpen() && thread.isAlive();
    }

    /**
     * The settings of a {@link RabbitInboxConsumer}. Immutable: each method returns a new builder;
     * a bad value is refused at once with a message naming the setting.
     *
     * <table>
     *   <caption>Settings and defaults</caption>
     *   <tr><th>Setting</th><th>Default</th></tr>
     *   <tr><td>{@link #messageIdSource}</td><td>the {@code message-id} property</td></tr>
     *   <tr><td>{@link #prefetch}</td><td>{@value #DEFAULT_PREFETCH}</td></tr>
     *   <tr><td>{@link #batchSize}</td><td>{@value #DEFAULT_BATCH_SIZE}: one transaction per delivery</td></tr>
     *   <tr><td>{@link #batchLinger}</td><td>20 ms</td></tr>
     *   <tr><td>{@link #maxEffectAttempts}</td><td>{@value #DEFAULT_MAX_EFFECT_ATTEMPTS}</td></tr>
     *   <tr><td>{@link #retryBackoff}</td><td>1 s</td></tr>
     *   <tr><td>{@link #resubscribeWithin}</td><td>30 s</td></tr>
     *   <tr><td>{@link #stopListener}</td><td>none (the consumer logs why it stopped)</td></tr>
     * </table>
     *
     * @param <H> the inbox's transaction handle
     * @param <T> the decoded value's type
     */
    public static final class Builder<H, T> {

        /** Deliveries the broker sends ahead of the acks, by default. */
        public static final int DEFAULT_PREFETCH = 100;
        /** Deliveries per transaction, by default. */
        public static final int DEFAULT_BATCH_SIZE = 1;
        /** Attempts of one id's effect before it is dead-lettered, by default. */
        public static final int DEFAULT_MAX_EFFECT_ATTEMPTS = 5;
        static final Duration DEFAULT_BATCH_LINGER = Duration.ofMillis(20);
        static final Duration DEFAULT_RETRY_BACKOFF = Duration.ofSeconds(1);
        static final Duration DEFAULT_RESUBSCRIBE_WITHIN = Duration.ofSeconds(30);

        private final Inbox<H> inbox;
        private final String queue;
        private final ContentDecoder<T> decoder;
        private final DeliveryEffect<H, T> effect;
        private final MessageIdSource messageIdSource;
        private final int prefetch;
        private final int batchSize;
        private final Duration batchLinger;
        private final int maxEffectAttempts;
        private final Duration retryBackoff;
        private final Duration resubscribeWithin;
        private final ConsumerStopListener stopListener;

        private Builder(Inbox<H> inbox, String queue, ContentDecoder<T> decoder, DeliveryEffect<H, T> effect,
                MessageIdSource messageIdSource, int prefetch, int batchSize, Duration batchLinger,
                int maxEffectAttempts, Duration retryBackoff, Duration resubscribeWithin,
                ConsumerStopListener stopListener) {
            this.inbox = inbox;
            this.queue = queue;
            this.decoder = decoder;
            this.effect = effect;
            this.messageIdSource = messageIdSource;
            this.prefetch = prefetch;
            this.batchSize = batchSize;
            this.batchLinger = batchLinger;
            this.maxEffectAttempts = maxEffectAttempts;
            this.retryBackoff = retryBackoff;
            this.resubscribeWithin = resubscribeWithin;
            this.stopListener = stopListener;
        }

        /**
         * Where each delivery's business id comes from.
         *
         * @param messageIdSource the source; not {@code null}
         * @return a builder with this setting
         */
        public Builder<H, T> messageIdSource(MessageIdSource messageIdSource) {
            Objects.requireNonNull(messageIdSource, "messageIdSource");
            return new Builder<>(inbox, queue, decoder, effect, messageIdSource, prefetch, batchSize, batchLinger,
                    maxEffectAttempts, retryBackoff, resubscribeWithin, stopListener);
        }

        /**
         * How many unacked deliveries the broker sends ahead ({@code basic.qos}, per consumer). At
         * least the batch size, or a batch could never fill.
         *
         * @param prefetch from 1 to 65535
         * @return a builder with this setting
         * @throws IllegalArgumentException if out of range
         */
        public Builder<H, T> prefetch(int prefetch) {
            if (prefetch < 1 || prefetch > 65535) {
                throw new IllegalArgumentException("prefetch must be from 1 to 65535, was " + prefetch);
            }
            return new Builder<>(inbox, queue, decoder, effect, messageIdSource, prefetch, batchSize, batchLinger,
                    maxEffectAttempts, retryBackoff, resubscribeWithin, stopListener);
        }

        /**
         * How many deliveries are applied in one transaction ({@link Inbox#applyAll}) and then
         * acked with one multiple-ack. 1 applies each in a transaction of its own
         * ({@link Inbox#apply}).
         *
         * @param batchSize from 1 to 10000, at most the prefetch
         * @return a builder with this setting
         * @throws IllegalArgumentException if out of range
         */
        public Builder<H, T> batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > 10_000) {
                throw new IllegalArgumentException("batchSize must be from 1 to 10000, was " + batchSize);
            }
            return new Builder<>(inbox, queue, decoder, effect, messageIdSource, prefetch, batchSize, batchLinger,
                    maxEffectAttempts, retryBackoff, resubscribeWithin, stopListener);
        }

        /**
         * How long a batch that is not full waits for more deliveries before it is applied as it is.
         *
         * @param batchLinger from zero to one minute
         * @return a builder with this setting
         * @throws IllegalArgumentException if out of range
         */
        public Builder<H, T> batchLinger(Duration batchLinger) {
            Duration checked = within("batchLinger", batchLinger, Duration.ofMinutes(1));
            return new Builder<>(inbox, queue, decoder, effect, messageIdSource, prefetch, batchSize, checked,
                    maxEffectAttempts, retryBackoff, resubscribeWithin, stopListener);
        }

        /**
         * How many times one id's effect may fail before its delivery is dead-lettered. On a quorum
         * queue the broker's {@code x-delivery-count} counts the earlier deliveries, across
         * consumer restarts; on a classic queue the consumer counts them, in memory.
         *
         * @param maxEffectAttempts from 1 to 1000; 1 dead-letters at the first failure
         * @return a builder with this setting
         * @throws IllegalArgumentException if out of range
         */
        public Builder<H, T> maxEffectAttempts(int maxEffectAttempts) {
            if (maxEffectAttempts < 1 || maxEffectAttempts > 1000) {
                throw new IllegalArgumentException("maxEffectAttempts must be from 1 to 1000, was " + maxEffectAttempts);
            }
            return new Builder<>(inbox, queue, decoder, effect, messageIdSource, prefetch, batchSize, batchLinger,
                    maxEffectAttempts, retryBackoff, resubscribeWithin, stopListener);
        }

        /**
         * How long the consumer waits before it requeues a delivery that may succeed later (busy,
         * outcome unknown, an effect's failure), so that a failing database is not hammered.
         * The consumer takes no new deliveries meanwhile.
         *
         * @param retryBackoff from zero to ten minutes
         * @return a builder with this setting
         * @throws IllegalArgumentException if out of range
         */
        public Builder<H, T> retryBackoff(Duration retryBackoff) {
            Duration checked = within("retryBackoff", retryBackoff, Duration.ofMinutes(10));
            return new Builder<>(inbox, queue, decoder, effect, messageIdSource, prefetch, batchSize, batchLinger,
                    maxEffectAttempts, checked, resubscribeWithin, stopListener);
        }

        /**
         * How long a consumer the broker cancelled (its queue was deleted, or moved to another
         * node) waits for the queue to exist again. It looks every 200 ms, consumes again as soon
         * as the queue is there, and stops of its own accord, telling the
         * {@link #stopListener}, when the time is up. {@link RabbitInboxConsumer#isOpen} stays
         * {@code true} while it waits.
         *
         * @param resubscribeWithin from zero (stop at the cancel) to one hour
         * @return a builder with this setting
         * @throws IllegalArgumentException if out of range
         */
        @Beta
        public Builder<H, T> resubscribeWithin(Duration resubscribeWithin) {
            Duration checked = within("resubscribeWithin", resubscribeWithin, Duration.ofHours(1));
            return new Builder<>(inbox, queue, decoder, effect, messageIdSource, prefetch, batchSize, batchLinger,
                    maxEffectAttempts, retryBackoff, checked, stopListener);
        }

        /**
         * Who is told when the consumer stops of its own accord: an effect threw an {@link Error},
         * or the broker cancelled the consumer and its queue did not come back (see
         * {@link ConsumerStopListener}).
         *
         * @param stopListener the listener; not {@code null}
         * @return a builder with this setting
         */
        @Beta
        public Builder<H, T> stopListener(ConsumerStopListener stopListener) {
            Objects.requireNonNull(stopListener, "stopListener");
            return new Builder<>(inbox, queue, decoder, effect, messageIdSource, prefetch, batchSize, batchLinger,
                    maxEffectAttempts, retryBackoff, resubscribeWithin, stopListener);
        }

        /**
         * Opens a channel on {@code connection}, sets its prefetch and starts consuming.
         *
         * @param connection an open connection; automatic recovery (the client's default) makes
         *     consuming resume after a lost connection
         * @return the running consumer
         * @throws IllegalArgumentException if the prefetch is smaller than the batch size
         * @throws IOException if the channel cannot be opened or the queue cannot be consumed (it
         *     does not exist, say); nothing is left open then
         */
        public RabbitInboxConsumer start(Connection connection) throws IOException {
            Objects.requireNonNull(connection, "connection");
            if (prefetch < batchSize) {
                throw new IllegalArgumentException("prefetch (" + prefetch + ") must be at least batchSize ("
                        + batchSize + "), or a batch could never fill");
            }
            Channel channel = connection.createChannel();
            if (channel == null) {
                throw new IOException("the connection has no channel left to open");
            }
            try {
                channel.basicQos(prefetch);
                BatchApplier<H, T> applier = new BatchApplier<>(inbox, messageIdSource, decoder, effect,
                        maxEffectAttempts);
                DeliveryWorker worker = new DeliveryWorker(channel, queue, applier, batchSize, batchLinger,
                        retryBackoff, resubscribeWithin, stopListener);
                DefaultConsumer brokerConsumer = new DefaultConsumer(channel) {
                    @Override
                    public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties,
                            byte[] body) {
                        worker.delivered(new Delivery(envelope, properties, body));
                    }

                    @Override
                    public void handleShutdownSignal(String consumerTag, ShutdownSignalException signal) {
                        worker.channelLost(signal);
                    }

                    @Override
                    public void handleCancel(String consumerTag) {
                        worker.cancelled();
                        forgetCancelled(channel, consumerTag);
                    }
                };
                String tag = channel.basicConsume(queue, false, brokerConsumer);
                Thread thread = new Thread(worker, "inbox-rabbitmq-" + queue);
                thread.setDaemon(true);
                RabbitInboxConsumer consumer = new RabbitInboxConsumer(queue, channel, applier, worker, thread, tag);
                worker.consuming(tag, brokerConsumer, consumer);
                thread.start();
                return consumer;
            } catch (IOException | RuntimeException e) {
                closeQuietly(channel, e);
                throw e;
            }
        }

        /**
         * The client's connection recovery records each subscription and restores it after a lost
         * connection; one the broker cancelled stays recorded. Restored while the queue is gone,
         * the broker closes the recovered channel for it, and the consumer could never consume
         * again. Cancelling the tag here only drops the record: the client knows the tag is gone and
         * refuses it without sending anything, so the channel is not used from this thread.
         */
        private static void forgetCancelled(Channel channel, String consumerTag) {
            try {
                channel.basicCancel(consumerTag);
            } catch (IOException | RuntimeException e) {
                log.debug("the cancelled subscription {} is forgotten ({})", consumerTag, e.toString());
            }
        }

        private static void closeQuietly(Channel channel, Exception failure) {
            try {
                if (channel.isOpen()) {
                    channel.close();
                }
            } catch (IOException | java.util.concurrent.TimeoutException | ShutdownSignalException e) {
                failure.addSuppressed(e);
            }
        }

        private static Duration within(String name, Duration value, Duration max) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.compareTo(max) > 0) {
                throw new IllegalArgumentException(name + " must be from 0 to " + max + ", was " + value);
            }
            return value;
        }
    }
}
