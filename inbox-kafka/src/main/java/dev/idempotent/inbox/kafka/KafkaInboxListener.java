package dev.idempotent.inbox.kafka;

import dev.idempotent.inbox.Outcome;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Observes a {@link KafkaInboxConsumer}. Every method has a no-op default.
 *
 * <p>{@link #onConflict} and {@link #onRejected} run <em>inside</em> the batch's transaction, after
 * the last record was judged and before the position is written, with the transaction's handle: a
 * report written through it commits exactly when the batch does. An exception thrown there rolls
 * back the whole batch, which is then retried. With {@link OffsetStorage#KAFKA} a crash after the
 * database commit and before Kafka's redelivers the batch, and its conflicts and rejections are
 * reported again (in a new transaction); with {@link OffsetStorage#DATABASE} each is reported once.
 * All methods run on the consumer's poll thread.
 *
 * @param <H> the inbox's transaction handle
 */
public interface KafkaInboxListener<H> {

    /**
     * A record's id was applied earlier with different content; its effect did not run and the
     * earlier business is kept. The record counts as consumed.
     *
     * @param tx the batch's transaction handle
     * @param record the record
     * @param conflict the inbox's outcome
     */
    default void onConflict(H tx, ConsumerRecord<String, byte[]> record, Outcome.Conflict<?> conflict) {}

    /**
     * A record will not be applied: it could not be read, its id or content is invalid, it is older
     * than the inbox can judge, or its effect (or its transaction alone) failed on every attempt
     * allowed. The record counts as consumed; this is the place to write it to a dead-letter table.
     * A record whose transaction failed alone is reported in a transaction of its own, with no
     * other record in it; the position passes the record only if that transaction commits.
     *
     * @param tx the batch's transaction handle
     * @param record the record
     * @param failure why it was not applied
     */
    default void onRejected(H tx, ConsumerRecord<String, byte[]> record, Exception failure) {}

    /**
     * The position of {@code partition} moved to {@code nextOffset}: every record before it is
     * settled (applied, duplicate, conflict or rejected) and committed in the database. Called after
     * the database commit and after the attempt to commit to Kafka.
     *
     * @param partition the partition
     * @param nextOffset the offset of the next record to consume
     */
    default void onCommitted(TopicPartition partition, long nextOffset) {}
}
