package dev.idempotent.inbox.kafka;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Inbox;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * A Kafka consumer that applies what it polls through an {@link Inbox}, so that a record redelivered
 * after a crash or a rebalance changes nothing twice.
 *
 * <p>{@link #run()} polls on the calling thread. Each poll's records are taken partition by
 * partition: one partition's records form one batch, applied with
 * {@link Inbox#applyAll(List, dev.idempotent.inbox.MessageEffect, dev.idempotent.inbox.BatchCompletion)}
 * in one database transaction, each record in a savepoint of its own. Only after that transaction
 * committed does the partition's position move, to the offset after the last <em>settled</em>
 * record (applied, duplicate, conflict or rejected): with {@link OffsetStorage#KAFKA} by
 * {@code commitSync}, with {@link OffsetStorage#DATABASE} in the same transaction as the batch.
 * A record whose failure may pass (a busy or lost database, a deadlock) stops the batch's position
 * there: the consumer seeks back to it and pauses the partition for the retry backoff; records after
 * it that did commit are then redelivered and answered as duplicates.
 *
 * <p>A batch whose transaction fails as a whole for another reason (a deferred constraint checked
 * at COMMIT, say) is applied again record by record, each in a transaction of its own, before an
 * attempt counts against any record: the records that commit alone move the position, and the one
 * that fails alone is retried up to {@link Builder#maxEffectAttempts(int)} and then handed to
 * {@link KafkaInboxListener#onRejected} in a transaction of its own. The position passes a record
 * only once it was applied or that hand-off committed.
 *
 * <pre>{@code
 * Map<String, Object> config = Map.of(
 *         ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9092",
 *         ConsumerConfig.GROUP_ID_CONFIG, "warehouse",
 *         ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
 * try (KafkaInboxConsumer<Handle> consumer = KafkaInboxConsumer.builder(inbox, config,
 *                 (Handle tx, ConsumerRecord<String, byte[]> record) ->
 *                         tx.execute("UPDATE stock SET total = total + ?", quantity(record)))
 *         .topics("receipts")
 *         .offsetStorage(OffsetStorage.DATABASE)
 *         .build()) {
 *     consumer.run(); // until another thread calls close()
 * }
 * }</pre>
 *
 * <h2>Rebalances</h2>
 *
 * <p>A partition's batch is applied and committed before the next poll, and Kafka revokes partitions
 * only inside a poll, so a partition is never released with a batch in flight: it has committed, or
 * (after {@link #close()}) it was never begun. On revocation the consumer commits the positions it
 * could not commit yet; on assignment, with {@link OffsetStorage#DATABASE}, it seeks each partition
 * to the position stored in the database.
 *
 * <p>Not thread-safe, except {@link #close()}, which may be called from any thread.
 *
 * @param <H> the inbox's transaction handle
 */
@Beta
public final class KafkaInboxConsumer<H> implements AutoCloseable {

    private final PollLoop<H> loop;

    private KafkaInboxConsumer(PollLoop<H> loop) {
        this.loop = loop;
    }

    /**
     * A builder for a consumer that applies records through {@code inbox}.
     *
     * <p>{@code kafkaConfig} is handed to {@link KafkaConsumer} as it is, except that the consumer
     * sets {@code enable.auto.commit} to {@code false} and deserializes keys as UTF-8 strings and
     * values as bytes. It must name a {@code group.id}.
     *
     * @param <H> the inbox's transaction handle
     * @param inbox the inbox records are applied through; not closed by the consumer
     * @param kafkaConfig the Kafka consumer configuration; not {@code null}
     * @param effect the business change, run for each record whose id is new
     * @return a builder
     * @throws IllegalArgumentException if {@code kafkaConfig} names no group or turns auto-commit on
     */
    public static <H> Builder<H> builder(Inbox<H> inbox, Map<String, Object> kafkaConfig, RecordEffect<H> effect) {
        return new Builder<>(inbox, kafkaConfig, effect);
    }

    /**
     * Subscribes and polls on the calling thread until {@link #close()} is called; returns at once
     * if {@code close()} was called before.
     *
     * @throws IllegalStateException if called a second time
     * @throws dev.idempotent.inbox.InboxStorageException of kind {@code SCHEMA_MISSING}, before
     *     subscribing, if positions are kept in the database and the inbox's table of offsets
     *     ({@code inbox_kafka_offset} by default) is missing (the message names the migration)
     * @throws dev.idempotent.inbox.InboxException when the inbox refuses a batch for good (it is
     *     closed, read-only, corrupt, or of a newer schema); what committed before stays committed
     * @throws org.apache.kafka.common.KafkaException when Kafka fails in a way the consumer cannot
     *     recover from (an authorization error, a fenced instance)
     */
    public void run() {
        loop.run();
    }

    /**
     * Stops {@link #run()} after the partition batch in flight, commits the positions not yet
     * committed, closes the Kafka consumer, and returns once that is done (or after the close
     * timeout). The inbox stays open. Safe to call from any thread, and more than once; called from
     * a listener, on the poll thread, it returns at once and {@code run()} ends after the batch.
     */
    @Override
    public void close() {
        loop.close();
    }

    /**
     * Builds a {@link KafkaInboxConsumer}. Every setting has a default except the topics.
     *
     * @param <H> the inbox's transaction handle
     */
    public static final class Builder<H> {

        private final Inbox<H> inbox;
        private final Map<String, Object> kafkaConfig;
        private final RecordEffect<H> effect;
        private List<String> topics = List.of();
        private RecordReader reader = RecordReader.keyAndBytes();
        private OffsetStorage offsetStorage = OffsetStorage.KAFKA;
        private KafkaInboxListener<H> listener = new KafkaInboxListener<>() {};
        private int maxEffectAttempts = 3;
        private Duration retryBackoff = Duration.ofSeconds(1);
        private Duration pollTimeout = Duration.ofMillis(500);
        private Duration commitTimeout = Duration.ofSeconds(10);

        private Builder(Inbox<H> inbox, Map<String, Object> kafkaConfig, RecordEffect<H> effect) {
            this.inbox = Objects.requireNonNull(inbox, "inbox");
            this.effect = Objects.requireNonNull(effect, "effect");
            Objects.requireNonNull(kafkaConfig, "kafkaConfig");
            Object group = kafkaConfig.get(ConsumerConfig.GROUP_ID_CONFIG);
            if (group == null || group.toString().isBlank()) {
                throw new IllegalArgumentException("kafkaConfig: " + ConsumerConfig.GROUP_ID_CONFIG
                        + " is required; offsets are kept per consumer group");
            }
            Object autoCommit = kafkaConfig.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
            if (autoCommit != null && Boolean.parseBoolean(autoCommit.toString())) {
                throw new IllegalArgumentException("kafkaConfig: " + ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG
                        + "=true would commit offsets before the database commit; leave it unset");
            }
            this.kafkaConfig = new HashMap<>(kafkaConfig);
            this.kafkaConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        }

        /**
         * The topics to subscribe to; required.
         *
         * @param topics one or more topic names
         * @return this builder
         * @throws IllegalArgumentException if none is given or one is blank
         */
        public Builder<H> topics(String... topics) {
            return topics(List.of(topics));
        }

        /**
         * The topics to subscribe to; required.
         *
         * @param topics one or more topic names
         * @return this builder
         * @throws IllegalArgumentException if none is given or one is blank
         */
        public Builder<H> topics(Collection<String> topics) {
            List<String> copy = List.copyOf(topics);
            if (copy.isEmpty() || copy.stream().anyMatch(String::isBlank)) {
                throw new IllegalArgumentException("topics: at least one, none blank; got " + copy);
            }
            this.topics = copy;
            return this;
        }

        /**
         * How a record becomes the message that guards it; default {@link RecordReader#keyAndBytes()}.
         *
         * @param reader the reader; not {@code null}
         * @return this builder
         */
        public Builder<H> reader(RecordReader reader) {
            this.reader = Objects.requireNonNull(reader, "reader");
            return this;
        }

        /**
         * Where positions are kept; default {@link OffsetStorage#KAFKA}.
         *
         * @param offsetStorage where; not {@code null}
         * @return this builder
         */
        public Builder<H> offsetStorage(OffsetStorage offsetStorage) {
            this.offsetStorage = Objects.requireNonNull(offsetStorage, "offsetStorage");
            return this;
        }

        /**
         * The listener told of conflicts, rejections and commits; default none.
         *
         * @param listener the listener; not {@code null}
         * @return this builder
         */
        public Builder<H> listener(KafkaInboxListener<H> listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * How many times a record whose effect throws its own exception, or whose transaction
         * alone fails, is tried before it is rejected; default 3. Only attempts whose outcome is
         * the record's own count: one in a batch that then failed as a whole does not. Failures
         * that may pass by themselves (a busy or lost database, a lock timeout) are retried
         * without limit.
         *
         * @param maxEffectAttempts at least 1
         * @return this builder
         * @throws IllegalArgumentException if below 1
         */
        public Builder<H> maxEffectAttempts(int maxEffectAttempts) {
            if (maxEffectAttempts < 1) {
                throw new IllegalArgumentException("maxEffectAttempts: at least 1, got " + maxEffectAttempts);
            }
            this.maxEffectAttempts = maxEffectAttempts;
            return this;
        }

        /**
         * How long a partition is paused after a failed record or batch before it is retried;
         * default 1 second.
         *
         * @param retryBackoff zero or more
         * @return this builder
         * @throws IllegalArgumentException if negative
         */
        public Builder<H> retryBackoff(Duration retryBackoff) {
            this.retryBackoff = nonNegative("retryBackoff", retryBackoff);
            return this;
        }

        /**
         * The longest one poll waits for records; default 500 ms.
         *
         * @param pollTimeout more than zero
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder<H> pollTimeout(Duration pollTimeout) {
            this.pollTimeout = positive("pollTimeout", pollTimeout);
            return this;
        }

        /**
         * The longest a commit to Kafka, and the consumer's close, may take; default 10 seconds. A
         * commit that times out is tried again after the next batch.
         *
         * @param commitTimeout more than zero
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder<H> commitTimeout(Duration commitTimeout) {
            this.commitTimeout = positive("commitTimeout", commitTimeout);
            return this;
        }

        /**
         * Creates the Kafka consumer; it connects when {@link KafkaInboxConsumer#run()} subscribes.
         *
         * @return the consumer
         * @throws IllegalStateException if no topic was given
         * @throws org.apache.kafka.common.KafkaException if Kafka refuses the configuration
         */
        public KafkaInboxConsumer<H> build() {
            if (topics.isEmpty()) {
                throw new IllegalStateException("topics: at least one is required");
            }
            Consumer<String, byte[]> consumer =
                    new KafkaConsumer<>(kafkaConfig, new StringDeserializer(), new ByteArrayDeserializer());
            String group = kafkaConfig.get(ConsumerConfig.GROUP_ID_CONFIG).toString();
            DatabaseOffsets offsets = offsetStorage == OffsetStorage.DATABASE ? new DatabaseOffsets(group, inbox.tables()) : null;
            return new KafkaInboxConsumer<>(new PollLoop<>(consumer, Set.copyOf(topics), inbox, effect, reader,
                    offsets, listener, maxEffectAttempts, retryBackoff, pollTimeout, commitTimeout));
        }

        private static Duration nonNegative(String name, Duration value) {
            Objects.requireNonNull(value, name);
            if (value.isNegative()) {
                throw new IllegalArgumentException(name + ": zero or more, got " + value);
            }
            return value;
        }

        private static Duration positive(String name, Duration value) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException(name + ": more than zero, got " + value);
            }
            return value;
        }
    }
}
