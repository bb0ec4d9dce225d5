package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Messages that no attempt will ever apply must leave the queue, to the dead-letter exchange, without
 * taking the messages around them along and without holding the consumer in a loop.
 */
class PoisonMessageTest {

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
    void aDecoderThatAnswersNullForOneBodyDeadLettersThatDeliveryAlone() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox();
        // A decoder with a bug: it answers null instead of refusing the body.
        ContentDecoder<Long> careless = delivery -> new String(delivery.getBody(), StandardCharsets.UTF_8).equals("?")
                ? null : Warehouse.QUANTITY.decode(delivery);
        rabbit.publish("snack-1", "1");
        rabbit.publish("poison", "?");
        rabbit.publish("snack-2", "2");
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, careless, Warehouse.ADD).batchSize(3)
                .batchLinger(Duration.ofMillis(300)).retryBackoff(Duration.ofMillis(20)).start(rabbit.connection);

        await("two acked, one dead-lettered",
                () -> consumer.stats().acked() == 2 && consumer.stats().deadLettered() == 1
                        || consumer.stats().requeued() > 20);
        consumer.close();
        assertEquals(0, consumer.stats().requeued(), "never requeued: it would fail the same way again");
        assertEquals(3, warehouse.total());
        assertEquals(List.of("poison"), rabbit.takeDeadLetters());
        assertTrue(rabbit.ready() == 0);
    }
}
