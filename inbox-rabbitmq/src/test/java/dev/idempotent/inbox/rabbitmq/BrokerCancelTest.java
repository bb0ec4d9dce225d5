package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker cancels a consumer when its queue is deleted (or a mirrored queue fails over). The
 * consumer consumes again once the queue is back; if it does not come back in time, the consumer
 * stops, says so to its listener, and {@link RabbitInboxConsumer#isOpen} answers false.
 */
class BrokerCancelTest {

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
    void aConsumerWhoseQueueIsDeletedAndDeclaredAgainConsumesAgain() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .start(rabbit.connection);
        rabbit.publish("snack-1", "1");
        await("the first applied", () -> consumer.stats().acked() == 1);
        String firstTag = consumer.consumerTag();

        rabbit.deleteQueue();
        rabbit.declareQueue();
        rabbit.publish("snack-2", "2");
        await("the second applied on the declared queue", () -> consumer.stats().acked() == 2);

        assertTrue(consumer.isOpen());
        assertEquals(3, warehouse.total());
        assertEquals(firstTag, consumer.consumerTag(), "consuming again under its tag");
    }

    @Test
    void aResubscribedConsumerRecoversFromALostConnectionOnce() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .start(rabbit.connection);
        rabbit.deleteQueue();
        rabbit.declareQueue();
        rabbit.publish("snack-1", "1");
        await("applied after the resubscribe", () -> consumer.stats().acked() == 1);

        rabbit.closeConnectionFromServer();
        await("the client saw the connection close", () -> !rabbit.connection.isOpen());
        await("the connection recovered", () -> rabbit.connection.isOpen());
        rabbit.publish("snack-2", "2");
        await("applied after the recovery", () -> consumer.stats().acked() == 2);

        assertTrue(consumer.isOpen());
        assertEquals(3, warehouse.total());
        assertEquals(1, consumerCount(), "one subscription on the queue, not one per tag it ever had");
    }

    @Test
    void aConnectionLostWhileTheQueueIsGoneDoesNotRestoreTheCancelledSubscription() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        CompletableFuture<Throwable> stopped = new CompletableFuture<>();
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .resubscribeWithin(Duration.ofHours(1)).stopListener((c, cause) -> stopped.complete(cause))
                .start(rabbit.connection);
        rabbit.deleteQueue();
        await("the queue is gone", () -> consumerCountOrMinusOne() == -1);

        // A failover: the queue is gone and the connection with it. The recovered connection must
        // not consume the queue under the tag the broker cancelled, which it no longer has.
        rabbit.closeConnectionFromServer();
        await("the client saw the connection close", () -> !rabbit.connection.isOpen());
        await("the connection recovered", () -> rabbit.connection.isOpen());
        rabbit.declareQueue();
        rabbit.publish("snack-1", "1");
        await("applied once the queue is back", () -> consumer.stats().acked() == 1 || stopped.isDone());

        assertFalse(stopped.isDone(), () -> "stopped: " + stopped.join());
        assertTrue(consumer.isOpen());
        assertEquals(1, warehouse.total());
        assertEquals(1, consumerCount());
    }

    private int consumerCount() throws Exception {
        try (com.rabbitmq.client.Connection probe = RabbitFixture.factory().newConnection();
                com.rabbitmq.client.Channel channel = probe.createChannel()) {
            return channel.queueDeclarePassive(rabbit.queue).getConsumerCount();
        }
    }

    @Test
    void closeEndsTheWaitForTheQueueAndIsNotAStopOfItsOwnAccord() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        CompletableFuture<Throwable> stopped = new CompletableFuture<>();
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .resubscribeWithin(Duration.ofHours(1)).stopListener((c, cause) -> stopped.complete(cause))
                .start(rabbit.connection);
        rabbit.deleteQueue();
        await("the queue is gone", () -> consumerCountOrMinusOne() == -1);

        consumer.close();
        assertFalse(consumer.isOpen(), "closed at once, not after the hour");
        assertFalse(stopped.isDone(), "a close is the application's own");
    }

    private int consumerCountOrMinusOne() {
        try {
            return consumerCount();
        } catch (Exception e) {
            return -1;
        }
    }

    @Test
    void aConsumerWhoseQueueDoesNotComeBackStopsAndSaysSo() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        CompletableFuture<Throwable> stopped = new CompletableFuture<>();
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .resubscribeWithin(Duration.ofMillis(500)).stopListener((c, cause) -> stopped.complete(cause))
                .start(rabbit.connection);

        rabbit.deleteQueue();
        await("the consumer no longer open", () -> !consumer.isOpen());

        Throwable cause = stopped.get(10, TimeUnit.SECONDS);
        assertInstanceOf(IOException.class, cause);
        assertTrue(cause.getMessage().contains(rabbit.queue), cause.getMessage());
    }
}
