package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.examples.crash.ChildJvm;
import dev.idempotent.inbox.examples.http.AckFault;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.Outbox;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A publisher process killed in the middle of a run loses nothing and finishes the job on restart. */
class PublisherCrashTest {

    private static final int ITEMS = 500;
    private static final int KILL_AFTER_APPLIED = 100;

    @TempDir
    Path dir;

    @Test
    void publisherKilledMidRunFinishesWithTheSameTotalOnRestart() throws Exception {
        Path items = dir.resolve("items.csv");
        Files.writeString(items, IntStream.range(0, ITEMS)
                .mapToObj(i -> "crate-" + i + "," + (i % 13 + 1))
                .collect(Collectors.joining("\n", "id,qty\n", "\n")));
        long expectedTotal = IntStream.range(0, ITEMS).map(i -> i % 13 + 1).sum();
        Path outboxFile = dir.resolve("outbox.db");

        CountDownLatch midRun = new CountDownLatch(KILL_AFTER_APPLIED);
        InboxListener countApplied = new InboxListener() {
            @Override
            public void onOutcome(String inbox, Outcome<?> outcome, Duration took) {
                if (outcome.isNewlyApplied()) {
                    midRun.countDown();
                }
            }
        };
        try (Warehouse warehouse = Warehouse.open(dir.resolve("warehouse.db"), builder -> builder.listener(countApplied));
                WarehouseServer server = WarehouseServer.start(warehouse,
                        ReceiverSettings.loopback().withAckFault(AckFault.random(0.3, 99)))) {
            List<String> publish = List.of("publish", "--outbox", outboxFile.toString(), "--to", server.uri().toString(),
                    "--file", items.toString(), "--backoff-ms", "1", "--max-backoff-ms", "50", "--max-attempts", "40");
            // A killed JVM cannot delete sqlite-jdbc's unpacked native library; keep it in the test's directory.
            List<String> jvmOptions = List.of("-Dorg.sqlite.tmpdir=" + dir);

            Map<ItemState, Long> atKill;
            long appliedAtKill;
            try (ChildJvm first = ChildJvm.start("publish-first", jvmOptions, Main.class.getName(), publish,
                    dir.resolve("first.err"))) {
                assertTrue(midRun.await(120, TimeUnit.SECONDS), "the first publisher got going");
                first.kill();
                atKill = counts(outboxFile);
                appliedAtKill = warehouse.stats().applied();
            }
            assertTrue(atKill.get(ItemState.PENDING) > 0, "killed in the middle: " + atKill);

            String summary;
            try (ChildJvm second = ChildJvm.start("publish-second", jvmOptions, Main.class.getName(), publish,
                    dir.resolve("second.err"))) {
                int status = second.awaitExit(Duration.ofSeconds(120));
                summary = String.join("\n", second.restOfOutput(Duration.ofSeconds(10)));
                assertEquals(0, status, summary + Files.readString(dir.resolve("second.err")));
            }

            System.out.printf("publisher crash: %d items; killed with %d acked and %d pending in the outbox,"
                            + " %d applied at the warehouse%n",
                    ITEMS, atKill.get(ItemState.ACKED), atKill.get(ItemState.PENDING), appliedAtKill);
            System.out.println("  restarted publisher said:\n" + summary.strip().indent(4).stripTrailing());
            System.out.printf("  warehouse: requests %d, applied effects %d, total %d (expected %d)%n",
                    server.metrics().requests(), server.metrics().appliedEffects(), warehouse.total(), expectedTotal);

            assertEquals(expectedTotal, warehouse.total());
            assertEquals(ITEMS, warehouse.receipts());
            assertEquals(ITEMS, warehouse.stats().applied());
            Map<ItemState, Long> after = counts(outboxFile);
            assertEquals(ITEMS, after.get(ItemState.ACKED), after.toString());
            assertTrue(summary.contains("enqueued " + ITEMS + " items: 0 new, " + ITEMS + " already enqueued"), summary);
        }
    }

    private static Map<ItemState, Long> counts(Path outboxFile) {
        try (Outbox outbox = Outbox.open(outboxFile)) {
            return outbox.counts();
        }
    }
}
