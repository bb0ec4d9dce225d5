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
import java.util.concurrent.atomic.AtomicBoolean;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Error}s the effect alone does not explain: one thrown by the application's
 * {@link MessageIdSource}, and one thrown by a batch that none of its messages throws again when
 * applied alone. Each must reach the {@link ConsumerStopListener}, and neither may pass a delivery
 * on to the next consumer to stop it too.
 */
class ErrorOutsideOneEffectTest {

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
    void anErrorFromTheMessageIdSourceDeadLettersThatDeliveryAndStopsOnlyOneConsumer() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        AssertionError broken = new AssertionError("the id source's invariant does not hold");
        MessageIdSource ids = delivery -> {
            String id = delivery.getProperties().getMessageId();
            if ("bad".equals(id)) {
                throw broken;
            }
            return id;
        };
        Map<RabbitInboxConsumer, Throwable> stopped = new ConcurrentHashMap<>();
        first = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .messageIdSource(ids).prefetch(1).retryBackoff(Duration.ofMillis(20)).stopListener(stopped::put)
                .start(rabbit.connection);
        second = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .messageIdSource(ids).prefetch(1).retryBackoff(Duration.ofMillis(20)).stopListener(stopped::put)
                .start(rabbit.connection);

        rabbit.publish("bad", "100");
        for (int i = 0; i < 10; i++) {
            rabbit.publish("good-" + i, "1");
        }
        await("one consumer stopped", () -> stopped.size() == 1);
        await("the ten good ones applied", () -> warehouse.total() == 10);

        RabbitInboxConsumer gone = stopped.keySet().iterator().next();
        RabbitInboxConsumer survivor = gone == first ? second : first;
        assertSame(broken, stopped.get(gone), "the id source's error, unchanged");
        assertFalse(gone.isOpen());
        assertTrue(survivor.isOpen(), "the other consumer never met the message");
        assertEquals(List.of("bad"), rabbit.takeDeadLetters(), "dead-lettered, not returned to the queue");
        survivor.close();
        assertEquals(0, rabbit.ready());
        assertEquals(1, stopped.size());
    }

    @Test
    void anErrorOfTheBatchThatNoMessageThrowsAloneStillStopsTheConsumer() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        // An OutOfMemoryError, say: thrown once, under the batch, by whichever message was running.
        OutOfMemoryError once = new OutOfMemoryError("Java heap space");
        AtomicBoolean thrown = new AtomicBoolean();
        DeliveryEffect<Handle, Long> effect = (tx, id, qty) -> {
            if (id.equals("m-2") && thrown.compareAndSet(false, true)) {
                throw once;
            }
            Warehouse.ADD.apply(tx, id, qty);
        };
        for (int i = 0; i < 5; i++) {
            rabbit.publish("m-" + i, "1");
        }
        Map<RabbitInboxConsumer, Throwable> stopped = new ConcurrentHashMap<>();
        first = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, effect).batchSize(5)
                .batchLinger(Duration.ofMillis(500)).stopListener(stopped::put).start(rabbit.connection);

        await("the consumer stopped", () -> stopped.size() == 1);
        assertSame(once, stopped.get(first), "the batch's error, unchanged");
        assertFalse(first.isOpen());
        assertEquals(5, warehouse.total(), "each applied alone, once");
        assertEquals(5, warehouse.effectRuns());
        assertEquals(5, first.stats().acked());
        assertEquals(0, rabbit.ready());
        assertEquals(List.of(), rabbit.takeDeadLetters());
    }
}
