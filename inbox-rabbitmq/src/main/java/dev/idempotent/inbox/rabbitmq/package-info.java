/**
 * A RabbitMQ consumer that applies each delivery through an {@link dev.idempotent.inbox.Inbox}
 * and acknowledges it only after the transaction that holds it has committed.
 *
 * <p>{@link dev.idempotent.inbox.rabbitmq.RabbitInboxConsumer} is the entry point; where a
 * delivery's business id comes from is a {@link dev.idempotent.inbox.rabbitmq.MessageIdSource},
 * how its body becomes inbox content a {@link dev.idempotent.inbox.rabbitmq.ContentDecoder}.
 */
package dev.idempotent.inbox.rabbitmq;
