package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.crash.ChildJvm;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.Outbox;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code publish} as a user runs it, and its refusals: one line on standard error and an exit code. */
class PublishCommandTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    // Never contacted: every refusal here comes before the first request.
    private static final String NOWHERE = "http://127.0.0.1:1";

    @TempDir
    Path dir;

    @Test
    void outboxThatIsADirectoryIsABadOptionValue() throws IOException {
        Path outbox = Files.createDirectory(dir.resolve("a-directory"));
        CommandRun.of("publish", "--outbox", outbox.toString(), "--to", NOWHERE, "--id", "snack-7", "--qty", "7")
                .assertRefused(2, "publish", "--outbox " + outbox);
    }

    @Test
    void outboxInAMissingDirectoryIsABadOptionValue() {
        Path outbox = dir.resolve("missing").resolve("outbox.db");
        CommandRun.of("publish", "--outbox", outbox.toString(), "--to", NOWHERE, "--id", "snack-7", "--qty", "7")
                .assertRefused(2, "publish", "--outbox " + outbox);
        assertFalse(Files.exists(outbox.getParent()));
    }

    @Test
    void corruptOutboxIsUnusable() throws IOException {
        Path outbox = dir.resolve("outbox.db");
        byte[] noise = new byte[8192];
        new Random(42).nextBytes(noise);
        Files.write(outbox, noise);
        CommandRun run = CommandRun.of("publish", "--outbox", outbox.toString(), "--to", NOWHERE,
                "--id", "snack-7", "--qty", "7").assertRefused(4, "publish", "--outbox " + outbox);
        assertTrue(run.err().contains("not a SQLite database"), run.err());
    }

    @Test
    void readOnlyOutboxIsUnusable() throws Exception {
        Path outbox = dir.resolve("outbox.db");
        Outbox.open(outbox).close();
        try (ReadOnlyFiles readOnly = new ReadOnlyFiles()) {
            readOnly.make(outbox);
            CommandRun run = CommandRun.of("publish", "--outbox", outbox.toString(), "--to", NOWHERE,
                    "--id", "snack-7", "--qty", "7").assertRefused(4, "publish", "--outbox " + outbox);
            assertTrue(run.err().contains("read-only"), run.err());
        }
    }

    @Test
    void missingItemsFileIsAnInputErrorAndCreatesNoOutbox() {
        Path outbox = dir.resolve("outbox.db");
        Path items = dir.resolve("items.csv");
        CommandRun run = CommandRun.of("publish", "--outbox", outbox.toString(), "--to", NOWHERE, "--file", items.toString())
                .assertRefused(3, "publish", "--file " + items);
        assertTrue(run.err().contains("does not exist"), run.err());
        assertFalse(Files.exists(outbox), "nothing is created for a file that is missing");
    }

    @Test
    void malformedItemsFileNamesTheOptionTheLineAndTheReason() throws IOException {
        Path outbox = dir.resolve("outbox.db");
        Path items = Files.writeString(dir.resolve("items.csv"), "id,qty\nsnack-7,7\nsnack-8,eight\n");
        CommandRun run = CommandRun.of("publish", "--outbox", outbox.toString(), "--to", NOWHERE, "--file", items.toString())
                .assertRefused(3, "publish", "--file " + items + " line 3: qty must be an integer");
        assertFalse(Files.exists(outbox), "no item of a malformed file is enqueued");
        assertTrue(run.out().isEmpty(), run.out());
    }

    @Test
    void badItemOnTheCommandLineIsABadOptionValue() {
        CommandRun.of("publish", "--outbox", dir.resolve("outbox.db").toString(), "--to", NOWHERE,
                "--id", "snack-7", "--qty", "0").assertRefused(2, "publish", "--qty");
        CommandRun.of("publish", "--outbox", dir.resolve("outbox.db").toString(), "--to", NOWHERE,
                "--id", "x".repeat(256), "--qty", "7").assertRefused(2, "publish", "--id");
    }

    @Test
    void quotedIdsArriveWithoutTheirQuotes() throws Exception {
        Path outboxFile = dir.resolve("outbox.db");
        Path items = Files.writeString(dir.resolve("items.csv"), "id,qty\n\"snack-7\",7\n\"crate, \"\"B\"\"\",2\n");
        try (Warehouse warehouse = Warehouse.open(dir.resolve("warehouse.db"));
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback())) {
            CommandRun run = CommandRun.of("publish", "--outbox", outboxFile.toString(), "--to", server.uri().toString(),
                    "--file", items.toString());
            assertEquals(0, run.exitCode(), run.out() + run.err());
            assertEquals(9, warehouse.stock().total());
            assertEquals(2, warehouse.stock().receipts());
        }
        try (Outbox outbox = Outbox.open(outboxFile)) {
            assertEquals(ItemState.ACKED, outbox.find("snack-7").orElseThrow().state());
            assertEquals(ItemState.ACKED, outbox.find("crate, \"B\"").orElseThrow().state());
        }
    }

    @Test
    void rejectedItemIsLoggedAtInfoNotWarn() throws Exception {
        Path err = dir.resolve("publish.err");
        try (Warehouse warehouse = Warehouse.open(dir.resolve("warehouse.db"));
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback())) {
            warehouse.receive("snack-7", 7, null);
            // The operator's log level, for the publisher too (the tests' settings keep it to errors).
            List<String> logAtInfo = List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                    "-Dorg.slf4j.simpleLogger.log.dev.idempotent.inbox.examples.publisher.Publisher=info");
            try (ChildJvm publish = ChildJvm.start("publish", logAtInfo, Main.class.getName(),
                    List.of("publish", "--outbox", dir.resolve("outbox.db").toString(), "--to", server.uri().toString(),
                            "--id", "snack-7", "--qty", "8"), err)) {
                assertEquals(0, publish.awaitExit(TIMEOUT), "a rejected item is settled");
            }
        }
        String log = Files.readString(err);
        System.out.println("publish's log for a conflict:\n" + log.strip().indent(2));
        assertTrue(log.contains("[INFO] Publisher - item id=snack-7 rejected: HTTP 409"), log);
        assertFalse(log.contains("[WARN]"), "a refusal is a normal outcome: " + log);
    }

    @Test
    void helpListsTheExitCodes() {
        CommandRun help = CommandRun.of("publish", "--help");
        assertEquals(0, help.exitCode());
        assertTrue(help.out().contains("Exit codes:"), help.out());
        for (String code : List.of("0", "1", "2", "3", "4")) {
            assertTrue(Pattern.compile("(?m)^\\s+" + code + "\\s+\\S").matcher(help.out()).find(),
                    "exit code " + code + " listed: " + help.out());
        }
    }
}
