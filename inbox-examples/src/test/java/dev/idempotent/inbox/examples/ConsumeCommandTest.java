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
class ConsumeCommandTest {

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
        assertTrue(first.out().contains("applied 3, duplicates 1, conflicts 1, rejected 2"), first.out());

        broker.send(topic, 0, List.of(receipt("snack-1", 3), receipt("snack-6", 1)));
        CommandRun second = CommandRun.of(args);

        assertEquals(0, second.exitCode(), second.err());
        assertTrue(second.out().contains("{\"total\":18,\"receipts\":4}"), second.out());
        assertTrue(second.out().contains("applied 1, duplicates 1, conflicts 0, rejected 0"),
                "resumes where the database says: " + second.out());
    }

    @Test
    void unknownBrokerIsOneLine() {
        CommandRun.of("consume", "--broker", "carrier-pigeon", "--db", dir.resolve("stock.db").toString())
                .assertRefused(ExitCodes.USAGE, "consume", "--broker");
    }
}
