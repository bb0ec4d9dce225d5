package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.ForwardingInbox;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import dev.idempotent.inbox.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.nio.file.Path;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each row of the consumer's broker table, against the real broker and a real SQLite file: what
 * each outcome and failure makes the consumer tell the broker, and that nothing is acked that was
 * not committed (the queue is empty only once the consumer is closed, which returns whatever it
 * held unacked).
 */
class BrokerMappingTest {

    private static final Duration SHORT_BACKOFF = Duration.ofMillis(50);

    @TempDir
    Path dir;

    private RabbitFixture rabbit;
    private SqliteInbox inbox;
    private RabbitInboxConsumer consumer;

    @AfterEach
    void close() throws Exception {
        if (consumer != null) {
            consumer.close();
        }
        if (inbox != null) {
            inbox.close();
        }
        if (rabbit != null) {
            rabbit.close();
        }
    }

    private Warehouse warehouse(boolean quorum) throws Exception {
        rabbit = new RabbitFixture(quorum);
        return new Warehouse(dir.resolve("stock.db"));
    }

    private RabbitInboxConsumer.Builder<Handle, Long> builder(Inbox<Handle> on) {
        return RabbitInboxConsumer.builder(on, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD).retryBackoff(SHORT_BACKOFF);
    }

    @Test
    void appliedAndDuplicateAreAckedAfterTheCommit() throws Exception {
        Warehouse warehouse = warehouse(false);
        inbox = warehouse.inbox();
        consumer = builder(inbox).start(rabbit.connection);

        rabbit.publish("snack-7", "7");
        rabbit.publish("snack-7", "7");
        rabbit.publish("snack-8", "8");
        await("three acks", () -> consumer.stats().acked() == 3);
        consumer.close();

        assertEquals(new ConsumerStats(2, 1, 3, 0, 0), consumer.stats());
        assertEquals(15, warehouse.total());
        assertEquals(2, warehouse.effectRuns(), "the duplicate did not run the effect");
        assertEquals(0, rabbit.ready(), "nothing went back to the queue: all three were acked");
        assertEquals(List.of(), rabbit.takeDeadLetters());
    }

    @Test
    void conflictIsRejectedToTheDeadLetterExchangeAndChangesNothing() throws Exception {
        Warehouse warehouse = warehouse(false);
        inbox = warehouse.inbox();
        consumer = builder(inbox).start(rabbit.connection);

        rabbit.publish("snack-7", "7");
        rabbit.publish("snack-7", "70");
        await("one ack and one dead letter", () -> consumer.stats().acked() == 1 && consumer.stats().deadLettered() == 1);
        consumer.close();

        assertEquals(7, warehouse.total());
        assertEquals(0, rabbit.ready());
        assertEquals(List.of("snack-7"), rabbit.takeDeadLetters());
    }

    @Test
    void staleMessageIsRejectedToTheDeadLetterExchange() throws Exception {
        Warehouse warehouse = warehouse(false);
        Instant t0 = Instant.parse("2026-01-05T10:00:00Z");
        MutableClock clock = new MutableClock(t0);
        inbox = warehouse.inbox(Duration.ofSeconds(5), clock);
        inbox.apply("old", Content.of(1), t0, tx -> {
            tx.execute("UPDATE stock SET total = total + 1 WHERE id = 1");
            return null;
        });
        clock.advance(Duration.ofDays(2));
        inbox.retention().purge(); // the horizon is now a day after t0
        consumer = builder(inbox).start(rabbit.connection);

        rabbit.publish(new AMQP.BasicProperties.Builder().messageId("late").headers(Map.of("origin", t0.toString())).build(), "5");
        await("a dead letter", () -> consumer.stats().deadLettered() == 1);
        consumer.close();

        assertEquals(1, warehouse.total(), "the stale message was not applied");
        assertEquals(List.of("late"), rabbit.takeDeadLetters());
        assertEquals(0, rabbit.ready());
    }

    @Test
    void deliveryWithoutAnIdAndUndecodableBodyAreRejected() throws Exception {
        Warehouse warehouse = warehouse(false);
        inbox = warehouse.inbox();
        consumer = builder(inbox).start(rabbit.connection);

        rabbit.publish((String) null, "7");
        rabbit.publish("snack-x", "seven");
        rabbit.publish("snack-8", "8");
        await("two dead letters and an ack", () -> consumer.stats().deadLettered() == 2 && consumer.stats().acked() == 1);
        consumer.close();

        assertEquals(8, warehouse.total());
        List<String> dead = rabbit.takeDeadLetters();
        assertEquals(2, dead.size());
        assertTrue(dead.contains("snack-x"));
    }

    @Test
    void busyIsRequeuedAfterTheBackoffAndAppliedOnceTheLockIsFree() throws Exception {
        Warehouse warehouse = warehouse(false);
        inbox = warehouse.inbox(Duration.ofMillis(20), java.time.Clock.systemUTC());
        try (Handle holder = warehouse.open()) {
            holder.execute("BEGIN IMMEDIATE");
            consumer = builder(inbox).start(rabbit.connection);
            rabbit.publish("snack-7", "7");
            await("a requeue", () -> consumer.stats().requeued() >= 1);
            assertEquals(0, consumer.stats().acked(), "busy is never acked");
            holder.execute("ROLLBACK");
        }
        await("the ack", () -> consumer.stats().acked() == 1);
        consumer.close();

        assertEquals(7, warehouse.total());
        assertEquals(1, warehouse.effectRuns());
        assertEquals(0, rabbit.ready());
        assertEquals(List.of(), rabbit.takeDeadLetters());
    }

    @Test
    void unknownOutcomeIsRequeuedAndTheRedeliveryIsAckedAsDuplicate() throws Exception {
        Warehouse warehouse = warehouse(false);
        SqliteInbox real = warehouse.inbox();
        inbox = real;
        AtomicBoolean loseFirstAnswer = new AtomicBoolean(true);
        // The commit happens, and its answer is lost on the way back, as when the connection to
        // the database dies right after COMMIT.
        Inbox<Handle> losing = new ForwardingInbox<>(real) {
            @Override
            public <R, X extends Exception> Outcome<R> apply(String id, Content content, Instant originTime,
                    Effect<Handle, R, X> effect) throws X {
                Outcome<R> outcome = super.apply(id, content, originTime, effect);
                if (loseFirstAnswer.getAndSet(false)) {
                    throw new OutcomeUnknownException("the commit's answer was lost", null);
                }
                return outcome;
            }
        };
        consumer = builder(losing).start(rabbit.connection);

        rabbit.publish("snack-7", "7");
        await("the ack", () -> consumer.stats().acked() == 1);
        consumer.close();

        assertEquals(new ConsumerStats(0, 1, 1, 0, 1), consumer.stats(), "requeued once, then a duplicate");
        assertEquals(7, warehouse.total());
        assertEquals(1, warehouse.effectRuns());
        assertEquals(0, rabbit.ready());
    }

    @Test
    void closedInboxRequeuesInsteadOfDeadLetteringSinceTheMessageIsNotAtFault() throws Exception {
        Warehouse warehouse = warehouse(false);
        SqliteInbox closed = warehouse.inbox();
        closed.close();
        consumer = builder(closed).start(rabbit.connection);

        rabbit.publish("snack-7", "7");
        await("a requeue", () -> consumer.stats().requeued() >= 1);
        consumer.close();

        assertEquals(0, consumer.stats().deadLettered());
        assertEquals(0, consumer.stats().acked());
        // The broker returns what a closed channel held unacked a moment after the close-ok.
        await("the message back in the queue, for an inbox that works", () -> ready() == 1);
        assertEquals(List.of(), rabbit.takeDeadLetters());
    }

    @Test
    void failingEffectIsRequeuedUpToTheLimitThenDeadLetteredOnAClassicQueue() throws Exception {
        effectFailsUntilTheLimit(false);
    }

    @Test
    void failingEffectIsCountedByTheQuorumQueuesDeliveryCount() throws Exception {
        effectFailsUntilTheLimit(true);
    }

    private void effectFailsUntilTheLimit(boolean quorum) throws Exception {
        Warehouse warehouse = warehouse(quorum);
        inbox = warehouse.inbox();
        Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
        DeliveryEffect<Handle, Long> failsForBad = (tx, id, qty) -> {
            attempts.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
            Warehouse.ADD.apply(tx, id, qty);
            if (id.equals("bad") || (id.equals("flaky") && attempts.get(id).get() < 3)) {
                throw new IllegalStateException("the effect refuses " + id);
            }
        };
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, failsForBad)
                .retryBackoff(SHORT_BACKOFF).maxEffectAttempts(4).start(rabbit.connection);

        rabbit.publish("bad", "1");
        rabbit.publish("flaky", "10");
        rabbit.publish("good", "100");
        await("bad dead-lettered, flaky and good acked",
                () -> consumer.stats().deadLettered() == 1 && consumer.stats().acked() == 2);
        consumer.close();

        assertEquals(4, attempts.get("bad").get(), "four attempts, then the dead letter");
        assertEquals(3, attempts.get("flaky").get());
        assertEquals(1, attempts.get("good").get());
        assertEquals(110, warehouse.total(), "failed attempts rolled back");
        assertEquals(2, warehouse.effectRuns());
        assertEquals(List.of("bad"), rabbit.takeDeadLetters());
        assertEquals(0, rabbit.ready());
    }

    @Test
    void batchAppliesInOneTransactionAndSettlesEachVerdict() throws Exception {
        Warehouse warehouse = warehouse(false);
        inbox = warehouse.inbox();
        for (int i = 0; i < 30; i++) {
            rabbit.publish("snack-" + i, String.valueOf(i + 1));
        }
        rabbit.publish("snack-3", "99"); // a conflict amid the batch
        rabbit.publish("snack-4", "5"); // a duplicate amid the batch
        for (int i = 30; i < 40; i++) {
            rabbit.publish("snack-" + i, String.valueOf(i + 1));
        }
        consumer = builder(inbox).batchSize(20).prefetch(20).batchLinger(Duration.ofMillis(200)).start(rabbit.connection);

        await("all settled", () -> consumer.stats().acked() + consumer.stats().deadLettered() == 42);
        consumer.close();

        assertEquals(new ConsumerStats(40, 1, 41, 1, 0), consumer.stats());
        assertEquals(40 * 41 / 2, warehouse.total());
        assertEquals(40, warehouse.effectRuns());
        assertEquals(List.of("snack-3"), rabbit.takeDeadLetters());
        assertEquals(0, rabbit.ready());
    }

    @Test
    void builderRefusesBadSettingsNamingThem() throws Exception {
        Warehouse warehouse = warehouse(false);
        inbox = warehouse.inbox();
        RabbitInboxConsumer.Builder<Handle, Long> builder = builder(inbox);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> builder.prefetch(0)).getMessage().contains("prefetch"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> builder.batchSize(0)).getMessage().contains("batchSize"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> builder.maxEffectAttempts(0)).getMessage()
                .contains("maxEffectAttempts"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> builder.retryBackoff(Duration.ofSeconds(-1)))
                .getMessage().contains("retryBackoff"));
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                () -> builder.batchSize(50).prefetch(10).start(rabbit.connection));
        assertTrue(small.getMessage().contains("prefetch"));
        assertThrows(java.io.IOException.class, () -> RabbitInboxConsumer.builder(inbox, rabbit.queue + "-absent",
                Warehouse.QUANTITY, Warehouse.ADD).start(rabbit.connection), "a queue that does not exist");
    }

    private long ready() {
        try {
            return rabbit.ready();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
