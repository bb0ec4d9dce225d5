package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.kafka.KafkaBroker;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code consume --broker kafka} against a real KRaft broker. */
class KafkaConsumeCommandTest {

    @TempDir
    static Path brokerDir;

    static KafkaBroker broker;

    @TempDir
    Path dir;

    @BeforeAll
    static void startBroker() {
        broker = KafkaBroker.start(brokerDir);
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    private static Map.Entry<String, String> receipt(String id, int qty) {
        return Map.entry(id, "{\"id\":\"" + id + "\",\"qty\":" + qty + "}");
    }

    @Test
    void consumesReceiptsOnceEachAndPrintsTheStockOnExit() {
        String topic = "receipts-" + UUID.randomUUID();
        broker.createTopic(topic, 2);
        List<Map.Entry<String, String>> receipts = new ArrayList<>(List.of(receipt("snack-1", 3), receipt("snack-2", 4),
                receipt("snack-1", 3), receipt("snack-2", 9), Map.entry("snack-3", "{\"id\":\"snack-3\"}"),
                Map.entry("other-key", "{\"id\":\"snack-4\",\"qty\":1}")));
        broker.send(topic, 0, receipts);
        broker.send(topic, 1, List.of(receipt("snack-5", 10)));
        String db = dir.resolve("stock.db").toString();
        String[] args = {"consume", "--broker", "kafka", "--bootstrap", broker.bootstrap(), "--topic", topic,
                "--group", "warehouse-" + UUID.randomUUID(), "--db", db, "--idle-exit", "PT2S"};

        CommandRun first = CommandRun.of(args);

        assertEquals(0, first.exitCode(), first.err());
        assertTrue(first.out().contains("{\"total\":17,\"receipts\":3}"), first.out());

        broker.send(topic, 0, List.of(receipt("snack-1", 3), receipt("snack-6", 1)));
        CommandRun second = CommandRun.of(args);

        assertEquals(0, second.exitCode(), second.err());
        assertTrue(second.out().contains("{\"total\":18,\"receipts\":4}"), second.out());
        // The positions are in the warehouse's file: partition 0 past its 8 records, partition 1 past its one.
        List<String> positions = org.jdbi.v3.core.Jdbi.create("jdbc:sqlite:" + db).withHandle(h -> h.createQuery(
                        "SELECT kafka_partition || ':' || next_offset FROM inbox_kafka_offset ORDER BY kafka_partition")
                .mapTo(String.class).list());
        assertEquals(List.of("0:8", "1:1"), positions);
    }

    @Test
    void metricsPortServesTheCountersInPrometheusText() throws Exception {
        String topic = "receipts-" + UUID.randomUUID();
        broker.createTopic(topic, 1);
        broker.send(topic, 0, List.of(receipt("snack-1", 3), receipt("snack-1", 3), receipt("snack-1", 4)));
        int port;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        java.util.concurrent.atomic.AtomicReference<CommandRun> run = new java.util.concurrent.atomic.AtomicReference<>();
        Thread consuming = new Thread(() -> run.set(CommandRun.of("consume", "--broker", "kafka",
                "--bootstrap", broker.bootstrap(), "--topic", topic, "--group", "warehouse-" + UUID.randomUUID(),
                "--db", dir.resolve("stock.db").toString(), "--metrics-port", Integer.toString(port),
                "--idle-exit", "PT3S")));
        consuming.start();
        java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
        java.net.URI metrics = java.net.URI.create("http://127.0.0.1:" + port + "/metrics");
        String scraped = "";
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (!(scraped.contains("warehouse_deliveries_total{outcome=\"dead_lettered\"} 1")
                && scraped.contains("warehouse_stock_total 3"))
                && System.nanoTime() < deadline) {
            try {
                scraped = client.send(java.net.http.HttpRequest.newBuilder(metrics).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            } catch (java.io.IOException notListeningYet) {
                java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L); // the polling interval
            }
        }
        consuming.join(60_000);

        assertTrue(scraped.contains("warehouse_deliveries_total{outcome=\"applied\"} 1\n"), scraped);
        assertTrue(scraped.contains("warehouse_deliveries_total{outcome=\"duplicate\"} 1\n"), scraped);
        assertTrue(scraped.contains("warehouse_deliveries_total{outcome=\"dead_lettered\"} 1\n"), scraped);
        assertTrue(scraped.contains("warehouse_stock_total 3\n"), scraped);
        assertEquals(0, run.get().exitCode(), run.get().err());
    }

    @Test
    void kafkaWithoutATopicIsRefused() {
        CommandRun.of("consume", "--broker", "kafka", "--db", dir.resolve("stock.db").toString())
                .assertRefused(ExitCodes.USAGE, "consume", "--topic");
    }
}
