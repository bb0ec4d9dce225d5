package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A quorum queue's {@code x-delivery-count} counts every return of a message, whatever its reason.
 * Requeues because the database was busy are not attempts of the effect: after more of them than
 * the attempt limit, an effect that then fails once is still retried, not dead-lettered.
 */
class QuorumRequeueTest {

    @TempDir
    Path dir;

    private RabbitFixture rabbit;
    private SqliteInbox inbox;
    private RabbitInboxConsumer consumer;
    private Handle holder;

    @AfterEach
    void close() throws Exception {
        if (consumer != null) {
            consumer.close();
        }
        if (holder != null) {
            holder.close();
        }
        if (inbox != null) {
            inbox.close();
        }
        if (rabbit != null) {
            rabbit.close();
        }
    }

    @Test
    void requeuesForABusyDatabaseDoNotCountAgainstTheEffectsAttempts() throws Exception {
        rabbit = new RabbitFixture(true);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        inbox = warehouse.inbox(Duration.ofMillis(20), Clock.systemUTC());
        holder = warehouse.open();
        holder.execute("BEGIN IMMEDIATE");
        AtomicBoolean failedOnce = new AtomicBoolean();
        DeliveryEffect<Handle, Long> failsOnce = (tx, id, qty) -> {
            if (failedOnce.compareAndSet(false, true)) {
                throw new IllegalStateException("the effect's first attempt fails");
            }
            Warehouse.ADD.apply(tx, id, qty);
        };
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, failsOnce)
                .maxEffectAttempts(2).retryBackoff(Duration.ofMillis(20)).start(rabbit.connection);

        rabbit.publish("snack-1", "1");
        await("three requeues while the database is busy", () -> consumer.stats().requeued() >= 3);
        holder.execute("ROLLBACK");
        await("applied, or dead-lettered", () -> consumer.stats().acked() + consumer.stats().deadLettered() == 1);
        consumer.close();

        assertEquals(List.of(), rabbit.takeDeadLetters(), "the effect failed once, of two attempts allowed");
        assertEquals(1, warehouse.total());
    }
}
