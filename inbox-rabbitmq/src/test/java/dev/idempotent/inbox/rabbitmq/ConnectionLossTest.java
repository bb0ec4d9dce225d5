package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker closes the consumer's connection (rabbitmqctl close_connection) while a batch is
 * being applied. The batch commits, but its acks cannot be proven delivered, so none is sent on
 * the lost channel; the broker redelivers the batch on the recovered connection, the committed
 * deliveries come back as duplicates and are acked then. Nothing is lost, nothing applied twice.
 */
class ConnectionLossTest {

    private static final int MESSAGES = 300;
    private static final int BATCH = 50;

    @TempDir
    Path dir;

    @Test
    void connectionClosedByTheBrokerMidBatchLosesNothingAndAppliesNothingTwice() throws Exception {
        try (RabbitFixture rabbit = new RabbitFixture(false)) {
            Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
            CountDownLatch midBatch = new CountDownLatch(1);
            CountDownLatch connectionClosed = new CountDownLatch(1);
            DeliveryEffect<Handle, Long> holdsTheFirstBatch = (tx, id, qty) -> {
                Warehouse.ADD.apply(tx, id, qty);
                if (id.equals("snack-" + (BATCH / 2))) {
                    midBatch.countDown();
                    // Bounded, so a broken test fails by its assertions instead of hanging.
                    connectionClosed.await(60, TimeUnit.SECONDS);
                }
            };
            long expected = 0;
            for (int i = 0; i < MESSAGES; i++) {
                rabbit.publish("snack-" + i, String.valueOf(i + 1));
                expected += i + 1;
            }
            try (SqliteInbox inbox = warehouse.inbox()) {
                RabbitInboxConsumer consumer = RabbitInboxConsumer
                        .builder(inbox, rabbit.queue, Warehouse.QUANTITY, holdsTheFirstBatch)
                        .batchSize(BATCH).prefetch(BATCH * 2).batchLinger(Duration.ofMillis(500))
                        .start(rabbit.connection);
                try {
                    assertTrue(midBatch.await(30, TimeUnit.SECONDS), "the first batch reached its middle");
                    rabbit.closeConnectionFromServer();
                    await("the client saw the connection close", () -> !rabbit.connection.isOpen());
                    connectionClosed.countDown();

                    await("every id is committed", () -> warehouse.distinctEffectRuns() == MESSAGES);
                    await("every delivery is acked", () -> consumer.stats().acked() >= MESSAGES);
                    ConsumerStats stats = consumer.stats();
                    assertEquals(MESSAGES, stats.applied());
                    assertTrue(stats.duplicates() >= BATCH,
                            "the first batch committed unacked and came back as duplicates: " + stats);
                } finally {
                    consumer.close();
                }
            }
            assertEquals(MESSAGES, warehouse.effectRuns(), "no effect ran twice");
            assertEquals(expected, warehouse.total());
            assertEquals(0, rabbit.ready(), "every delivery was acked: nothing came back when the consumer closed");
            assertEquals(List.of(), rabbit.takeDeadLetters());
        }
    }
}
