package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An effect that throws an {@link Error} for one message. The consumer that meets it dead-letters
 * that delivery, stops, closes its channel and tells its {@link ConsumerStopListener}; it never
 * dies silently, and the message never reaches (and stops) the next consumer.
 */
class EffectErrorTest {

    private static final AssertionError BROKEN = new AssertionError("the effect's invariant does not hold");

    private static final DeliveryEffect<Handle, Long> ADD_UNLESS_BAD = (tx, id, qty) -> {
        if (id.equals("bad")) {
            throw BROKEN;
        }
        Warehouse.ADD.apply(tx, id, qty);
    };

    @TempDir
    Path dir;

    private RabbitFixture rabbit;
    private SqliteInbox inbox;
    private RabbitInboxConsumer first;
    private RabbitInboxConsumer second;

    @AfterEach
    void close() throws Exception {
        for (RabbitInboxConsumer consumer : new RabbitInboxConsumer[] {first, second}) {
            if (consumer != null) {
                consumer.close();
            }
        }
        if (inbox != null) {
            inbox.close();
        }
        if (rabbit != null) {
            rabbit.close();
        }
    }

    @Test
    void anErrorStopsOnlyTheConsumerThatMetItAndIsToldToItsListener() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        Map<RabbitInboxConsumer, Throwable> stopped = new ConcurrentHashMap<>();
        Map<RabbitInboxConsumer, Boolean> openWhenTold = new ConcurrentHashMap<>();
        ConsumerStopListener listener = (consumer, cause) -> {
            openWhenTold.put(consumer, consumer.isOpen());
            stopped.put(consumer, cause);
        };
        // Two consumers on one queue, one delivery each at a time: whichever meets "bad" must not
        // pass it on to the other.
        first = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, ADD_UNLESS_BAD).prefetch(1)
                .retryBackoff(Duration.ofMillis(20)).stopListener(listener).start(rabbit.connection);
        second = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, ADD_UNLESS_BAD).prefetch(1)
                .retryBackoff(Duration.ofMillis(20)).stopListener(listener).start(rabbit.connection);

        rabbit.publish("bad", "100");
        for (int i = 0; i < 10; i++) {
            rabbit.publish("good-" + i, "1");
        }
        await("the ten good ones applied", () -> warehouse.total() == 10);
        await("one consumer stopped", () -> stopped.size() == 1);

        RabbitInboxConsumer gone = stopped.keySet().iterator().next();
        RabbitInboxConsumer survivor = gone == first ? second : first;
        assertSame(BROKEN, stopped.get(gone), "the effect's error, unchanged");
        assertFalse(openWhenTold.get(gone), "closed when the listener is told");
        assertFalse(gone.isOpen());
        assertTrue(survivor.isOpen(), "the other consumer never met the message");
        assertEquals(List.of("bad"), rabbit.takeDeadLetters());
        assertEquals(1, gone.stats().deadLettered());
        survivor.close();
        assertEquals(0, rabbit.ready());
        assertEquals(1, stopped.size());
    }

    @Test
    void anErrorInABatchKeepsTheCommittedOnesAndReturnsTheRest() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        for (int i = 0; i < 4; i++) {
            rabbit.publish("before-" + i, "1");
        }
        rabbit.publish("bad", "100");
        for (int i = 0; i < 5; i++) {
            rabbit.publish("after-" + i, "10");
        }
        Map<RabbitInboxConsumer, Throwable> stopped = new ConcurrentHashMap<>();
        first = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, ADD_UNLESS_BAD).batchSize(10)
                .batchLinger(Duration.ofMillis(500)).retryBackoff(Duration.ofSeconds(30)).stopListener(stopped::put)
                .start(rabbit.connection);

        await("the consumer stopped", () -> stopped.size() == 1);
        assertSame(BROKEN, stopped.get(first));
        assertFalse(first.isOpen());
        assertEquals(List.of("bad"), rabbit.takeDeadLetters());
        await("the untried ones back in the queue", () -> ready() == 5);
        assertEquals(4, warehouse.total(), "the ones before it were applied alone and acked");

        second = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, ADD_UNLESS_BAD)
                .start(rabbit.connection);
        await("the rest applied by a new consumer", () -> warehouse.total() == 54);
    }

    private long ready() {
        try {
            return rabbit.ready();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
