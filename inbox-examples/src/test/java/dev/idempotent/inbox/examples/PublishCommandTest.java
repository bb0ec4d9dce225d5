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
    void receiverThatIsNotAnHttpUrlWithHostAndPortIsABadOptionValue() {
        Path outbox = dir.resolve("outbox.db");
        for (String to : new String[] {"http://127.0.0.1:PORT", "127.0.0.1:43003", "ftp://127.0.0.1:21", "http://",
                "http://127.0.0.1:8080/receipts?x=1"}) {
            CommandRun run = CommandRun.of("publish", "--outbox", outbox.toString(), "--to", to, "--id", "snack-7", "--qty", "7")
                    .assertRefused(2, "publish", "--to " + to);
            assertTrue(run.err().contains("http://HOST:PORT"), run.err());
        }
        assertFalse(Files.exists(outbox), "nothing created for a bad --to");
    }

    @Test
    void fileAndIdTogetherSayWhatIsAccepted() throws IOException {
        Path items = Files.writeString(dir.resolve("items.csv"), "snack-7,7\n");
        CommandRun run = CommandRun.of("publish", "--outbox", dir.resolve("outbox.db").toString(), "--to", NOWHERE,
                "--file", items.toString(), "--id", "snack-8", "--qty", "8").assertRefused(2, "publish", "--file");
        assertTrue(run.err().contains("either --id ID --qty N or --file ITEMS.csv"), run.err());
        CommandRun.of("publish", "--outbox", dir.resolve("outbox.db").toString(), "--to", NOWHERE, "--id", "snack-8")
                .assertRefused(2, "publish", "--qty");
        assertFalse(Files.exists(dir.resolve("outbox.db")));
    }

    @Test
    void settingMistakesNameTheOptionNotTheField() {
        String outbox = dir.resolve("outbox.db").toString();
        String[][] cases = {{"--window", "0"}, {"--max-attempts", "0"}, {"--timeout-ms", "0"}, {"--backoff-ms", "-1"},
                {"--max-backoff-ms", "-1"}, {"--max-resend-age", "PT0S"}};
        for (String[] mistake : cases) {
            CommandRun.of("publish", "--outbox", outbox, "--to", NOWHERE, mistake[0], mistake[1])
                    .assertRefused(2, "publish", mistake[0] + " must be");
        }
        CommandRun.of("publish", "--outbox", outbox, "--to", NOWHERE, "--backoff-ms", "10", "--max-backoff-ms", "5")
                .assertRefused(2, "publish", "--backoff-ms must be");
        assertFalse(Files.exists(dir.resolve("outbox.db")));
    }

    @Test
    void maxResendAgeTakesTheShortForm() {
        CommandRun run = CommandRun.of("publish", "--outbox", dir.resolve("outbox.db").toString(), "--to", NOWHERE,
                "--max-resend-age", "12h");
        assertEquals(0, run.exitCode(), run.err());
        CommandRun.of("publish", "--outbox", dir.resolve("outbox.db").toString(), "--to", NOWHERE,
                "--max-resend-age", "12 hours").assertRefused(2, "publish", "--max-resend-age");
    }

    /** Parks every item of {@code items} as exhausted: the receiver's port is closed. */
    private void exhaust(Path outbox, Path items) {
        CommandRun run = CommandRun.of("publish", "--outbox", outbox.toString(), "--to", NOWHERE, "--file", items.toString(),
                "--max-attempts", "2", "--backoff-ms", "0", "--max-backoff-ms", "0");
        assertEquals(1, run.exitCode(), run.out() + run.err());
        assertTrue(run.out().contains("outbox: 0 acked, 0 pending, 0 rejected, 3 exhausted"), run.out());
        assertTrue(run.out().contains("--requeue makes them pending again"), "the way out is named: " + run.out());
    }

    @Test
    void requeuedExhaustedItemsAreDeliveredAndAppliedOnce() throws Exception {
        Path outboxFile = dir.resolve("outbox.db");
        exhaust(outboxFile, Files.writeString(dir.resolve("items.csv"), "snack-1,1\nsnack-2,2\nsnack-3,4\n"));
        try (Warehouse warehouse = Warehouse.open(dir.resolve("warehouse.db"));
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback())) {
            String to = server.uri().toString();
            CommandRun run = CommandRun.of("publish", "--outbox", outboxFile.toString(), "--to", to, "--requeue");
            assertEquals(0, run.exitCode(), run.out() + run.err());
            assertTrue(run.out().contains("requeued 3 exhausted items"), run.out());
            assertTrue(run.out().contains("outbox: 3 acked, 0 pending, 0 rejected, 0 exhausted"), run.out());

            CommandRun again = CommandRun.of("publish", "--outbox", outboxFile.toString(), "--to", to, "--requeue");
            assertEquals(0, again.exitCode(), again.out() + again.err());
            assertTrue(again.out().contains("requeued 0 exhausted items"), again.out());
            assertEquals(7, warehouse.stock().total(), "each applied once");
            assertEquals(3, warehouse.stock().receipts());
            assertEquals(3, server.metrics().appliedEffects());
        }
    }

    @Test
    void requeueOfGivenIdsTakesOnlyThoseAndRefusesAnIdThatIsNotExhausted() throws Exception {
        Path none = dir.resolve("none.db");
        CommandRun.of("publish", "--outbox", none.toString(), "--to", NOWHERE, "--requeue", "snack-1")
                .assertRefused(2, "publish", "--requeue snack-1");
        assertFalse(Files.exists(none), "no outbox created to requeue from");
        Path outboxFile = dir.resolve("outbox.db");
        exhaust(outboxFile, Files.writeString(dir.resolve("items.csv"), "snack-1,1\nsnack-2,2\nsnack-3,4\n"));
        try (Warehouse warehouse = Warehouse.open(dir.resolve("warehouse.db"));
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback())) {
            String to = server.uri().toString();
            CommandRun.of("publish", "--outbox", outboxFile.toString(), "--to", to, "--requeue", "snack-1", "no-such-item")
                    .assertRefused(2, "publish", "--requeue no-such-item");
            assertEquals(0, server.metrics().requests(), "nothing requeued, nothing sent");

            CommandRun run = CommandRun.of("publish", "--outbox", outboxFile.toString(), "--to", to,
                    "--requeue", "snack-1", "snack-3");
            assertEquals(1, run.exitCode(), "snack-2 is still exhausted: " + run.out() + run.err());
            assertTrue(run.out().contains("requeued 2 exhausted items"), run.out());
            assertEquals(5, warehouse.stock().total());

            CommandRun.of("publish", "--outbox", outboxFile.toString(), "--to", to, "--requeue", "snack-1")
                    .assertRefused(2, "publish", "--requeue snack-1");
        }
        try (Outbox outbox = Outbox.open(outboxFile)) {
            assertEquals(ItemState.ACKED, outbox.find("snack-1").orElseThrow().state());
            assertEquals(ItemState.EXHAUSTED, outbox.find("snack-2").orElseThrow().state());
            assertEquals(ItemState.ACKED, outbox.find("snack-3").orElseThrow().state());
        }
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
