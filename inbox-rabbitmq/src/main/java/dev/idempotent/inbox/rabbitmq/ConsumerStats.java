package dev.idempotent.inbox.rabbitmq;

/**
 * What a {@link RabbitInboxConsumer} did since it started, by what the broker was told.
 *
 * @param applied deliveries whose effect this consumer committed (then acked)
 * @param duplicates deliveries of ids applied before with the same content (acked, effect not run)
 * @param acked deliveries acknowledged to the broker: committed ones, applied or duplicate
 * @param deadLettered deliveries rejected without requeue: conflicts, stale or undecodable ones,
 *     and those whose effect failed on every allowed attempt
 * @param requeued deliveries given back with requeue, to be tried again
 */
public record ConsumerStats(long applied, long duplicates, long acked, long deadLettered, long requeued) {}
