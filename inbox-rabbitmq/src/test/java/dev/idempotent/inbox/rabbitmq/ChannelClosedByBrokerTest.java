package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.ShutdownSignalException;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker closes the consumer's channel with a channel error (as for a delivery left unacked past
 * the broker's {@code consumer_timeout}), and the connection stays open. The client recovers
 * connections, not channels closed this way, so the consumer will never consume again: it stops,
 * tells its listener, and answers {@code isOpen() == false}.
 */
class ChannelClosedByBrokerTest {

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
    void aChannelTheBrokerClosesStopsTheConsumerAndSaysSo() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        CompletableFuture<Throwable> stopped = new CompletableFuture<>();
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .stopListener((c, cause) -> stopped.complete(cause)).start(rabbit.connection);
        rabbit.publish("snack-1", "1");
        await("the first applied", () -> consumer.stats().acked() == 1);

        rabbit.failConsumerChannel();

        Throwable cause = stopped.get(30, TimeUnit.SECONDS);
        assertTrue(cause instanceof ShutdownSignalException, String.valueOf(cause));
        assertFalse(consumer.isOpen());
        assertTrue(rabbit.connection.isOpen(), "the connection is not the consumer's to close");

        // A new consumer on the same connection takes over.
        consumer.close();
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .start(rabbit.connection);
        rabbit.publish("snack-2", "2");
        await("the second applied by the new consumer", () -> consumer.stats().acked() == 1);
        assertEquals(3, warehouse.total());
    }
}
