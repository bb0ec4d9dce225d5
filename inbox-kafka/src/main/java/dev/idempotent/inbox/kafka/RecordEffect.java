package dev.idempotent.inbox.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The business change a {@link KafkaInboxConsumer} applies once per id, inside the batch's
 * transaction, for a record whose id is new to the inbox.
 *
 * @param <H> the inbox's transaction handle
 */
@FunctionalInterface
public interface RecordEffect<H> {

    /**
     * Applies the change {@code record} asks for, through {@code tx}. Must not commit, roll back or
     * keep {@code tx}.
     *
     * @param tx the batch's transaction handle, inside this record's savepoint
     * @param record the record, with its key as the id
     * @throws Exception rolls back this record alone; the consumer retries it and, after the
     *     attempts allowed, reports it to {@link KafkaInboxListener#onRejected}
     */
    void apply(H tx, ConsumerRecord<String, byte[]> record) throws Exception;
}
