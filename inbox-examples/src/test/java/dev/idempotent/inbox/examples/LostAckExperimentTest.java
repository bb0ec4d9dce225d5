package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.http.AckFault;
import dev.idempotent.inbox.examples.http.ReceiverMetrics;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import dev.idempotent.inbox.examples.publisher.DeliveryListener;
import dev.idempotent.inbox.examples.publisher.DeliveryReport;
import dev.idempotent.inbox.examples.publisher.Enqueued;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.Outbox;
import dev.idempotent.inbox.examples.publisher.Publisher;
import dev.idempotent.inbox.examples.publisher.PublisherSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seed's experiment at scale: half of all ACKs are lost after the commit, over real TCP, and
 * still every shipment is applied exactly once.
 */
class LostAckExperimentTest {

    private static final int ITEMS = 1000;

    @TempDir
    Path dir;

    @Test
    void everyItemIsAckedAndAppliedOnceWhenHalfTheAcksAreLost() throws Exception {
        List<Outbox.Item> items = new ArrayList<>();
        long expectedTotal = 0;
        for (int i = 0; i < ITEMS; i++) {
            int qty = i % 97 + 1;
            items.add(new Outbox.Item("item-" + i, qty));
            expectedTotal += qty;
        }
        List<Outbox.Item> enqueued = new ArrayList<>(items);
        for (int i = 0; i < ITEMS; i += 3) {
            enqueued.add(items.get(i)); // a third of them enqueued twice
        }

        try (Warehouse warehouse = Warehouse.open(dir.resolve("warehouse.db"));
                WarehouseServer server = WarehouseServer.start(warehouse,
                        ReceiverSettings.loopback().withAckFault(AckFault.random(0.5, 2024)));
                Outbox outbox = Outbox.open(dir.resolve("outbox.db"))) {
            List<Enqueued> results = outbox.enqueueAll(enqueued);
            PublisherSettings settings = PublisherSettings.to(server.uri())
                    .withMaxAttempts(40)
                    .withBackoff(Duration.ofMillis(1), Duration.ofMillis(50))
                    .withJitterSeed(7);
            DeliveryReport report = new Publisher(outbox, settings, DeliveryListener.NONE).deliverPending();

            ReceiverMetrics metrics = server.metrics();
            System.out.printf("lost-ACK experiment: %d items (%d enqueued twice), drop-ack-rate 0.5%n",
                    ITEMS, results.stream().filter(r -> r == Enqueued.ALREADY_ENQUEUED).count());
            System.out.printf("  publisher: attempts %d, resends %d, acked %d (duplicates confirmed %d), rejected %d, exhausted %d%n",
                    report.attempts(), report.resends(), report.acked(), report.duplicatesConfirmed(), report.rejected(),
                    report.exhausted());
            System.out.printf("  warehouse: requests %d, applied effects %d, ACKs dropped %d, total %d (expected %d)%n",
                    metrics.requests(), metrics.appliedEffects(), metrics.acksDropped(), warehouse.total(), expectedTotal);

            assertEquals(ITEMS / 3 + 1, results.stream().filter(r -> r == Enqueued.ALREADY_ENQUEUED).count());
            assertEquals(ITEMS, report.acked());
            assertEquals(ITEMS, outbox.counts().get(ItemState.ACKED));
            assertEquals(expectedTotal, warehouse.total());
            assertEquals(ITEMS, warehouse.receipts());
            assertEquals(ITEMS, metrics.appliedEffects());
            assertTrue(metrics.requests() > metrics.appliedEffects(), "more requests than applied effects");
            assertEquals(metrics.requests(), report.attempts());
            assertTrue(report.duplicatesConfirmed() > 0, "some lost ACKs were confirmed by a duplicate");
        }
    }
}
