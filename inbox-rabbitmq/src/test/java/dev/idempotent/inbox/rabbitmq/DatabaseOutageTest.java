package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idempotent.inbox.Inbox;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A database outage longer than the effect's attempt limit: while the effect runs, an operator (or
 * a failover) ends the inbox's connection on the server, more times than the consumer allows the
 * effect to fail. None of those is the effect's failure: the delivery is requeued each time and
 * applied once the database is back, never dead-lettered. The shared server itself keeps running.
 */
class DatabaseOutageTest {

    private static final int TERMINATIONS = 4;

    private RabbitFixture rabbit;
    private ServerDatabase database;
    private Inbox<Handle> inbox;
    private RabbitInboxConsumer consumer;

    @AfterEach
    void close() throws Exception {
        if (consumer != null) {
            consumer.close();
        }
        if (inbox != null) {
            inbox.close();
        }
        if (database != null) {
            database.close();
        }
        if (rabbit != null) {
            rabbit.close();
        }
    }

    @Test
    void postgresConnectionsTerminatedMidEffectAreRequeuedNotDeadLettered() throws Exception {
        outage(ServerDatabase.Kind.POSTGRES, "SELECT pg_backend_pid()", "SELECT pg_sleep(60)",
                pid -> "SELECT pg_terminate_backend(" + pid + ")");
    }

    @Test
    void mariaDbConnectionsKilledMidEffectAreRequeuedNotDeadLettered() throws Exception {
        outage(ServerDatabase.Kind.MARIADB, "SELECT CONNECTION_ID()", "SELECT SLEEP(60)",
                id -> "KILL CONNECTION " + id);
    }

    /**
     * The database refuses connections (its pool is stopped, or the server is unreachable) for longer
     * than the attempt limit, on a quorum queue whose {@code x-delivery-count} counts each of those
     * returns; then the effect fails once. It is retried, and applied.
     */
    @Test
    void refusedConnectionsOnAQuorumQueueDoNotUseUpTheEffectsAttempts() throws Exception {
        rabbit = new RabbitFixture(true);
        database = new ServerDatabase(ServerDatabase.Kind.POSTGRES);
        database.jdbi.useHandle(h -> h.execute("CREATE TABLE receipt (id VARCHAR(64) PRIMARY KEY)"));
        AtomicBoolean refused = new AtomicBoolean(false);
        inbox = database.inbox(Duration.ofSeconds(5), refused);
        refused.set(true);
        AtomicBoolean failedOnce = new AtomicBoolean();
        DeliveryEffect<Handle, byte[]> effect = (tx, id, body) -> {
            if (failedOnce.compareAndSet(false, true)) {
                throw new IllegalStateException("the effect's first attempt fails");
            }
            tx.execute("INSERT INTO receipt (id) VALUES (?)", id);
        };
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, ContentDecoder.bytes(), effect)
                .maxEffectAttempts(2).retryBackoff(Duration.ofMillis(20)).start(rabbit.connection);
        rabbit.publish("receipt-1", "1");
        await("five requeues while connections are refused", () -> consumer.stats().requeued() >= 5);
        refused.set(false);
        await("applied, or dead-lettered", () -> consumer.stats().acked() + consumer.stats().deadLettered() == 1);
        consumer.close();

        assertEquals(List.of(), rabbit.takeDeadLetters(), "the effect failed once, of two attempts allowed");
        assertEquals(1, consumer.stats().applied());
    }

    private void outage(ServerDatabase.Kind kind, String ownId, String wait,
            java.util.function.LongFunction<String> end) throws Exception {
        rabbit = new RabbitFixture(false);
        database = new ServerDatabase(kind);
        database.jdbi.useHandle(h -> h.execute("CREATE TABLE receipt (id VARCHAR(64) PRIMARY KEY)"));
        inbox = database.inbox(Duration.ofSeconds(5));
        AtomicBoolean down = new AtomicBoolean(true);
        BlockingQueue<Long> running = new LinkedBlockingQueue<>();
        DeliveryEffect<Handle, byte[]> effect = (tx, id, body) -> {
            tx.execute("INSERT INTO receipt (id) VALUES (?)", id);
            if (down.get()) {
                running.add(tx.createQuery(ownId).mapTo(Long.class).one());
                tx.execute(wait); // until the connection is ended
            }
        };
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, ContentDecoder.bytes(), effect)
                .maxEffectAttempts(2).retryBackoff(Duration.ofMillis(20)).start(rabbit.connection);
        rabbit.publish("receipt-1", "1");

        for (int i = 0; i < TERMINATIONS; i++) {
            Long connection = running.poll(30, TimeUnit.SECONDS);
            assertEquals(false, connection == null, "the effect ran again after " + i + " terminations");
            database.admin(end.apply(connection));
            if (i == TERMINATIONS - 1) {
                down.set(false);
            }
        }
        await("applied, or dead-lettered", () -> consumer.stats().acked() + consumer.stats().deadLettered() == 1);
        consumer.close();

        assertEquals(List.of(), rabbit.takeDeadLetters(), "an ended connection is not the effect's failure");
        assertEquals(1, consumer.stats().applied());
        long receipts = database.jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM receipt")
                .mapTo(Long.class).one());
        assertEquals(1, receipts);
    }
}
