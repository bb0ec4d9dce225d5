package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.crash.ChildJvm;
import dev.idempotent.inbox.examples.crash.CrashReceiver;
import dev.idempotent.inbox.examples.crash.StockView;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.RequestOutcome;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import dev.idempotent.inbox.examples.publisher.Attempt;
import dev.idempotent.inbox.examples.publisher.DeliveryReport;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.Outbox;
import dev.idempotent.inbox.examples.publisher.OutboxItem;
import dev.idempotent.inbox.examples.publisher.Publisher;
import dev.idempotent.inbox.examples.publisher.PublisherSettings;
import dev.idempotent.inbox.examples.publisher.Verdict;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A publisher that dies in the one gap its ordering leaves, after a verified ACK and before the
 * completion mark, resends the item on restart, gets it confirmed as a duplicate, and marks it;
 * the warehouse counts it once. Not timing-based: the publisher halts itself at exactly that point
 * ({@code publish --halt-after-ack ID}).
 */
class PublisherHaltedBeforeMarkTest {

    private static final int ITEMS = 5;
    private static final String HALTED = "box-2";
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void haltedBetweenAckAndMarkResendsGetsADuplicateAcceptedAndMarks() throws Exception {
        Path outboxFile = dir.resolve("outbox.db");
        Path warehouseFile = dir.resolve("warehouse.db");
        List<Outbox.Item> items = new ArrayList<>();
        long expectedTotal = 0;
        for (int i = 0; i < ITEMS; i++) {
            items.add(new Outbox.Item("box-" + i, 10 + i));
            expectedTotal += 10 + i;
        }
        try (Outbox outbox = Outbox.open(outboxFile)) {
            outbox.enqueueAll(items);
        }

        try (Warehouse warehouse = Warehouse.open(warehouseFile);
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback())) {
            // One request at a time, so the items before the halted one are settled and those after it unsent.
            List<String> publish = List.of("publish", "--outbox", outboxFile.toString(), "--to", server.uri().toString(),
                    "--window", "1", "--halt-after-ack", HALTED);
            String halting;
            int status;
            // A halted JVM cannot delete sqlite-jdbc's unpacked native library; keep it in the test's directory.
            try (ChildJvm first = ChildJvm.start("publish-halting", List.of("-Dorg.sqlite.tmpdir=" + dir),
                    Main.class.getName(), publish)) {
                halting = first.awaitLine(line -> line.startsWith("HALTING"), TIMEOUT);
                status = first.awaitExit(TIMEOUT);
            }
            assertEquals("HALTING ACK_VERIFIED " + HALTED, halting);
            assertEquals(CrashReceiver.HALT_STATUS, status, "halted, not exited");

            Map<String, OutboxItem> atHalt = outboxItems(outboxFile);
            StockView.Snapshot warehouseAtHalt = StockView.read(warehouseFile, SqliteWarehouse.INBOX);
            OutboxItem halted = atHalt.get(HALTED);

            Map<String, Attempt> restart = new ConcurrentHashMap<>();
            DeliveryReport report;
            try (Outbox outbox = Outbox.open(outboxFile)) {
                PublisherSettings settings = PublisherSettings.to(server.uri()).withWindow(1);
                report = new Publisher(outbox, settings, attempt -> restart.put(attempt.id(), attempt)).deliverPending();
            }
            Map<String, OutboxItem> after = outboxItems(outboxFile);
            StockView.Snapshot warehouseAfter = StockView.read(warehouseFile, SqliteWarehouse.INBOX);
            Attempt resend = restart.get(HALTED);
            long addedByRestart = warehouseAfter.total() - warehouseAtHalt.total();

            System.out.printf("[publisher-halt] halted after the verified ACK of %s (exit status %d): outbox %s;"
                            + " warehouse %d rows, %s in the inbox: %b, total %d%n",
                    HALTED, status, states(atHalt), warehouseAtHalt.rows(), HALTED, warehouseAtHalt.has(HALTED),
                    warehouseAtHalt.total());
            System.out.printf("[publisher-halt] restart: %s resent (attempt %d), HTTP %s %s -> %s; report %s%n",
                    HALTED, resend.number(), resend.status().orElse(-1), resend.response(), resend.state(), report);
            System.out.printf("[publisher-halt] after: outbox %s; warehouse %d rows, %s in the inbox: %b,"
                            + " total %d (expected %d), the restart added %d for the two unsent items;"
                            + " requests: %d applied, %d duplicate%n",
                    states(after), warehouseAfter.rows(), HALTED, warehouseAfter.has(HALTED), warehouseAfter.total(),
                    expectedTotal, addedByRestart, server.metrics().requests(RequestOutcome.APPLIED),
                    server.metrics().requests(RequestOutcome.DUPLICATE));

            // At the halt: the warehouse has the item, the outbox does not know it.
            assertEquals(ItemState.PENDING, halted.state(), "no completion mark was written");
            assertEquals(0, halted.attempts(), "not even the attempt was recorded");
            assertEquals(ItemState.ACKED, atHalt.get("box-0").state());
            assertEquals(ItemState.ACKED, atHalt.get("box-1").state());
            assertEquals(ItemState.PENDING, atHalt.get("box-3").state());
            assertEquals(ItemState.PENDING, atHalt.get("box-4").state());
            assertEquals(Set.of("box-0", "box-1", "box-2"), warehouseAtHalt.ids(), "the halted item was applied");
            assertEquals(10 + 11 + 12, warehouseAtHalt.total());

            // The restart: the resend is a duplicate with accepted:true, and the item is marked.
            assertEquals(200, resend.status().getAsInt());
            assertTrue(resend.response().contains("\"accepted\":true"), resend.response());
            assertTrue(resend.response().contains("\"applied\":false"), resend.response());
            assertEquals(new Verdict.Acked(false), resend.verdict());
            assertEquals(ItemState.ACKED, resend.state());
            assertEquals(3, report.acked(), report.toString());
            assertEquals(1, report.duplicatesConfirmed(), report.toString());
            assertTrue(report.settled(), report.toString());
            assertEquals(ITEMS, after.values().stream().filter(item -> item.state() == ItemState.ACKED).count());

            // The warehouse: the resend changed nothing; one row per id, each counted once.
            assertEquals(13 + 14, addedByRestart, "only the two unsent items were added");
            assertEquals(expectedTotal, warehouseAfter.total());
            assertEquals(Set.of("box-0", "box-1", "box-2", "box-3", "box-4"), warehouseAfter.ids(), "one row per id");
            assertEquals(ITEMS, server.metrics().requests(RequestOutcome.APPLIED));
            assertEquals(1, server.metrics().requests(RequestOutcome.DUPLICATE));
            assertEquals(ITEMS, warehouse.stats().applied());
        }
    }

    private static Map<String, OutboxItem> outboxItems(Path outboxFile) {
        try (Outbox outbox = Outbox.open(outboxFile)) {
            Map<String, OutboxItem> items = new TreeMap<>();
            for (int i = 0; i < ITEMS; i++) {
                outbox.find("box-" + i).ifPresent(item -> items.put(item.id(), item));
            }
            return items;
        }
    }

    private static String states(Map<String, OutboxItem> items) {
        StringBuilder text = new StringBuilder();
        items.values().forEach(item -> text.append(text.length() == 0 ? "" : ", ").append(item.id()).append(' ')
                .append(item.state().name().toLowerCase(Locale.ROOT)));
        return text.toString();
    }
}
