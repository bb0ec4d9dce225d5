package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The queue is deleted and declared again while a batch is being applied: the batch commits, its
 * deliveries are gone with the old queue, and the consumer goes on with the new queue's messages.
 */
class QueueDeletedMidBatchTest {

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

    @Test
    void aQueueDeletedAndDeclaredDuringASlowBatchIsConsumedAgain() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        CountDownLatch midBatch = new CountDownLatch(1);
        CountDownLatch deleted = new CountDownLatch(1);
        DeliveryEffect<Handle, Long> slow = (tx, id, qty) -> {
            Warehouse.ADD.apply(tx, id, qty);
            if (id.equals("old-5")) {
                midBatch.countDown();
                deleted.await(60, TimeUnit.SECONDS);
            }
        };
        for (int i = 0; i < 10; i++) {
            rabbit.publish("old-" + i, "1");
        }
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, slow).batchSize(10)
                .batchLinger(Duration.ofMillis(500)).start(rabbit.connection);
        assertTrue(midBatch.await(30, TimeUnit.SECONDS));
        rabbit.deleteQueue();
        rabbit.declareQueue();
        deleted.countDown();

        rabbit.publish("new-1", "100");
        await("the new queue's message applied", () -> warehouse.total() == 110);
        assertTrue(consumer.isOpen());
        assertEquals(11, warehouse.effectRuns());
    }
}
