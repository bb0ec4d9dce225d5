package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idempotent.inbox.examples.crash.ChildJvm;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code consume}: its refusals are one line each, and a running consumer serves its metrics. */
class ConsumeCommandTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void unknownBrokerIsRefusedNamingTheOption() {
        CommandRun.of("consume", "--broker", "carrier-pigeon", "--db", dir.resolve("s.db").toString())
                .assertRefused(ExitCodes.USAGE, "consume", "--broker");
    }

    @Test
    void rabbitmqWithoutAQueueIsRefused() {
        CommandRun.of("consume", "--broker", "rabbitmq", "--db", dir.resolve("s.db").toString())
                .assertRefused(ExitCodes.USAGE, "consume", "--queue");
    }

    @Test
    void batchLargerThanThePrefetchIsRefused() {
        CommandRun.of("consume", "--broker", "rabbitmq", "--queue", "q", "--batch", "200", "--prefetch", "100",
                "--db", dir.resolve("s.db").toString()).assertRefused(ExitCodes.USAGE, "consume", "--prefetch");
    }

    @Test
    void brokerThatCannotBeReachedIsOneLineWithoutThePassword() {
        CommandRun run = CommandRun.of("consume", "--broker", "rabbitmq", "--uri", "amqp://guest:secret@127.0.0.1:1",
                "--queue", "q", "--db", dir.resolve("s.db").toString()).assertRefused(ExitCodes.NETWORK, "consume", "--uri");
        assertTrue(!run.err().contains("secret"), "no password in the message: " + run.err());
        assertFalse(Files.exists(dir.resolve("s.db")), "no database for a broker that cannot be reached");
    }

    @Test
    void kafkaBrokerThatCannotBeReachedIsOneLineAndExitFive() {
        Path db = dir.resolve("s.db");
        CommandRun run = CommandRun.of("consume", "--broker", "kafka", "--bootstrap", "127.0.0.1:1", "--topic", "receipts",
                "--connect-timeout", "2s",
                "--db", db.toString()).assertRefused(ExitCodes.NETWORK, "consume", "--bootstrap 127.0.0.1:1");
        assertFalse(Files.exists(db), "no database for a broker that cannot be reached");
        assertEquals("", run.out());
    }

    @Test
    void theExecutablesLoggingKeepsTheKafkaClientToErrors() throws IOException {
        // The tests' own simplelogger.properties shadows the executable's; read the executable's.
        java.util.Properties shipped = new java.util.Properties();
        java.net.URL url = Main.class.getProtectionDomain().getCodeSource().getLocation();
        try (var in = Files.newInputStream(Path.of(java.net.URI.create(url.toString())).resolve("simplelogger.properties"))) {
            shipped.load(in);
        }
        assertEquals("error", shipped.getProperty("org.slf4j.simpleLogger.log.org.apache.kafka"));
        assertEquals("info", shipped.getProperty("org.slf4j.simpleLogger.defaultLogLevel"));
    }

    @Test
    void queueThatDoesNotExistIsOneLine() {
        CommandRun.of("consume", "--broker", "rabbitmq", "--uri", RabbitQueue.URI, "--queue", "no-such-queue-here",
                "--db", dir.resolve("s.db").toString()).assertRefused(ExitCodes.NETWORK, "consume", "--queue");
        assertFalse(Files.exists(dir.resolve("s.db")), "no database for a queue that cannot be consumed");
    }

    @Test
    void consumesIntoPostgreSqlGivenAsServeTakesIt() throws Exception {
        try (PostgresSchema schema = PostgresSchema.create("consume");
                RabbitQueue queue = new RabbitQueue();
                ChildJvm consumer = ChildJvm.start("consume-pg", ChildJvm.FAST_START, Main.class.getName(),
                        List.of("consume", "--broker", "rabbitmq", "--uri", RabbitQueue.URI, "--queue", queue.name,
                                "--db", schema.url(), "--batch", "10", "--prefetch", "20"))) {
            assertTrue(consumer.awaitLine(line -> line.startsWith("consuming receipts from RabbitMQ"), TIMEOUT)
                    .contains("into " + schema.described()), "names the database");
            queue.publish("snack-7", 7);
            queue.publish("snack-7", 7);
            queue.publish("snack-9", 9);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (schema.jdbi().withHandle(h -> h.createQuery("SELECT total FROM stock").mapTo(Long.class).one()) != 16) {
                if (System.nanoTime() > deadline) {
                    fail("the stock never reached 16");
                }
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
            }
            consumer.terminate();
            assertEquals(List.of("{\"total\":16,\"receipts\":2}"), consumer.restOfOutput(TIMEOUT));
            assertEquals(0, queue.ready());
        }
    }

    @Test
    void runningConsumerServesPrometheusTextAndPrintsTheStockOnExit() throws Exception {
        try (RabbitQueue queue = new RabbitQueue();
                ChildJvm consumer = ChildJvm.start("consume", ChildJvm.FAST_START, Main.class.getName(),
                        List.of("consume", "--broker", "rabbitmq", "--uri", RabbitQueue.URI, "--queue", queue.name,
                                "--db", dir.resolve("stock.db").toString(), "--metrics-port", "0"))) {
            consumer.awaitLine(line -> line.startsWith("consuming receipts from RabbitMQ"), TIMEOUT);
            Matcher port = Pattern.compile("metrics on http://127\\.0\\.0\\.1:(\\d+)/metrics")
                    .matcher(consumer.awaitLine(line -> line.startsWith("metrics on"), TIMEOUT));
            assertTrue(port.matches());
            queue.publish("snack-7", 7);
            queue.publish("snack-7", 7);
            queue.publish("snack-7", 8);
            queue.publish("snack-9", 9);
            URI metrics = URI.create("http://127.0.0.1:" + port.group(1) + "/metrics");
            HttpClient http = HttpClient.newHttpClient();
            String text = "";
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!text.contains("warehouse_acks_total 3\n") || !text.contains("outcome=\"dead_lettered\"} 1\n")) {
                if (System.nanoTime() > deadline) {
                    fail("the metrics never showed 3 acks and a dead letter: " + text);
                }
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
                text = http.send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString()).body();
            }
            assertTrue(text.contains("warehouse_deliveries_total{outcome=\"applied\"} 2\n"), text);
            assertTrue(text.contains("warehouse_deliveries_total{outcome=\"duplicate\"} 1\n"), text);
            assertTrue(text.contains("warehouse_stock_total 16\n"), text);
            assertTrue(text.contains("warehouse_receipts 2\n"), text);

            consumer.terminate();
            assertEquals(List.of("{\"total\":16,\"receipts\":2}"), consumer.restOfOutput(TIMEOUT));
            assertEquals(List.of("{\"id\":\"snack-7\",\"qty\":8}"), queue.takeDeadLetters());
        }
    }
}
