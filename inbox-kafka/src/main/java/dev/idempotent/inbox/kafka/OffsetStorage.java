package dev.idempotent.inbox.kafka;

/**
 * Where a {@link KafkaInboxConsumer} keeps the position of each partition it consumed.
 */
public enum OffsetStorage {

    /**
     * In Kafka's committed offsets of the consumer group, committed with {@code commitSync} after the
     * database commit of each batch. A crash between the two redelivers the batch, whose ids the
     * inbox then answers as duplicates.
     */
    KAFKA,

    /**
     * In the inbox's own table of offsets, one row per group, topic and partition, written in the
     * same transaction as the batch: {@code <prefix>kafka_offset} in the inbox's schema, as
     * {@link dev.idempotent.inbox.Inbox#tables()} names it ({@code inbox_kafka_offset} in the
     * connection's own schema by default). Consumers of inboxes on different prefixes keep their
     * positions apart, in their own tables. On assignment the consumer seeks to
     * the stored position, so the database alone decides what was consumed. Kafka's committed
     * offsets are still written after each batch, for lag monitoring only. Needs an inbox whose
     * transaction handle is a Jdbi {@code Handle} (the SQLite, PostgreSQL and MariaDB inboxes).
     *
     * <p>The table is the inbox's schema step's, never the consumer's: schema mode {@code CREATE}
     * creates it with a new schema, and each adapter ships it as migration
     * {@code V0_2__kafka_offset.sql} (Flyway: in location {@code flyway} for the default names, in
     * {@code flyway-prefixed} for a prefix of one's own) and change set {@code inbox-kafka-offset-1}
     * (Liquibase), to run over a schema an earlier version created. Its group and topic compare
     * exactly, as Kafka's names do, on every database. Without it {@link KafkaInboxConsumer#run()}
     * refuses to start. While the database cannot say where a newly assigned partition stands, the
     * partition stays paused and the consumer asks again after the retry backoff.
     */
    DATABASE
}
