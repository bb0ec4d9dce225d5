/**
 * A Kafka consumer over an inbox: {@link dev.idempotent.inbox.kafka.KafkaInboxConsumer} applies each
 * polled partition batch through {@link dev.idempotent.inbox.Inbox#applyAll} in one transaction and
 * moves the consumer's position only after that transaction committed, in Kafka
 * ({@link dev.idempotent.inbox.kafka.OffsetStorage#KAFKA}) or in the database itself
 * ({@link dev.idempotent.inbox.kafka.OffsetStorage#DATABASE}).
 */
package dev.idempotent.inbox.kafka;
