package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.crash.ChildJvm;
import dev.idempotent.inbox.examples.http.Http;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve} as a user runs it: a separate process, stopped with SIGTERM; and its refusals, in
 * this JVM through the same command line, each one line on standard error and an exit code.
 */
class ServeCommandTest {

    private static final Pattern URL = Pattern.compile("http://127\\.0\\.0\\.1:\\d+");
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    /** Runs {@code inbox-examples ARGS} in a child JVM, its log in {@code serve.err}. */
    private ChildJvm start(List<String> jvmOptions, String... args) {
        return ChildJvm.start("serve", jvmOptions, Main.class.getName(), List.of(args), dir.resolve("serve.err"));
    }

    @Test
    void servesUntilSigtermAndLogsIdsButNeverQuantities() throws Exception {
        Path err = dir.resolve("serve.err");
        // The tests' logging settings keep logs to warnings; here the log is read as an operator sees it.
        try (ChildJvm serve = start(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=info"),
                "serve", "--db", dir.resolve("warehouse.db").toString(), "--port", "0")) {
            String line = serve.nextLine(TIMEOUT);
            Matcher url = URL.matcher(line);
            assertTrue(url.find(), "first line names the address: " + line);

            Http http = new Http(URI.create(url.group()));
            assertEquals(200, http.receipt("probe-1", 7654321).status());
            assertEquals(200, http.receipt("probe-1", 7654321).status());
            assertEquals(409, http.receipt("probe-1", 7654329).status());
            assertEquals(400, http.postJson("{\"id\":\"probe-2\",\"qty\":7654322,\"note\":\"secret-payload\"}").status());
            assertEquals(7654321, http.get("/stock").json().get("total").longValue());

            serve.terminate();
            serve.awaitExit(TIMEOUT);
            assertEquals("warehouse stopped", serve.nextLine(TIMEOUT), "the shutdown hook ran");
        }
        String log = Files.readString(err);
        System.out.println("serve's log, as an operator sees it:\n" + log.strip().indent(2));
        assertTrue(log.contains("receipt id=probe-1 outcome=applied"), log);
        assertTrue(log.contains("receipt id=probe-1 outcome=duplicate"), log);
        assertTrue(log.contains("id=probe-1 outcome=conflict"), log);
        assertTrue(log.contains("receipt id=probe-2 outcome=invalid status=400 error=unknown_field"), log);
        assertFalse(log.contains("765432"), "no quantity in the logs");
        assertFalse(log.contains("secret-payload"), "no payload in the logs");
        assertFalse(log.contains("\"qty\""), "no body in the logs");
    }

    @Test
    void refusesANonLoopbackAddressWithoutAToken() throws Exception {
        assertRefusedBeforeOpening("refusing to listen on 0.0.0.0 without a token", "--bind", "0.0.0.0");
    }

    @Test
    void refusesFewerThanOneRequestThread() throws Exception {
        assertRefusedBeforeOpening("threads must be at least 1, was 0", "--threads", "0");
    }

    /** {@code serve --db FILE OPTIONS} exits with an error naming {@code reason} and leaves no database file. */
    private void assertRefusedBeforeOpening(String reason, String... options) throws Exception {
        Path db = dir.resolve("warehouse.db");
        List<String> args = new ArrayList<>(List.of("serve", "--db", db.toString()));
        args.addAll(List.of(options));
        try (ChildJvm serve = start(List.of(), args.toArray(String[]::new))) {
            assertNotEquals(0, serve.awaitExit(TIMEOUT));
        }
        String message = Files.readString(dir.resolve("serve.err"));
        assertTrue(message.contains(reason), message);
        assertFalse(Files.exists(db), "refused before opening anything");
    }

    @Test
    void refusesADatabaseUrlItCannotOpen() throws Exception {
        try (ChildJvm serve = start(List.of(), "serve", "--db", "mysql://db.example/warehouse")) {
            assertNotEquals(0, serve.awaitExit(TIMEOUT));
        }
        assertTrue(Files.readString(dir.resolve("serve.err")).contains("--db mysql://... is not supported"));
    }

    @Test
    void refusesARetentionShorterThanTheSendersResendAge() throws Exception {
        List<String> out;
        try (ChildJvm serve = start(List.of(), "serve", "--db", dir.resolve("warehouse.db").toString(),
                "--retention", "P7D", "--sender-max-resend-age", "P7D", "--purge-every", "PT1H", "--port", "0")) {
            assertNotEquals(0, serve.awaitExit(TIMEOUT));
            out = serve.restOfOutput(TIMEOUT);
        }
        String message = Files.readString(dir.resolve("serve.err"));
        System.out.println("serve refused a short retention:\n" + message.lines().findFirst().orElse("").indent(2));
        assertTrue(message.contains("refusing to start: retention (PT168H) must be at least senderMaxResendAge (PT168H)"
                + " plus clockSkewMargin (PT10M)"), message);
        assertFalse(out.stream().anyMatch(line -> line.contains("listening")), "never listened: " + out);
    }

    @Test
    void portInUseIsOneLineAndNothingIsCreated() throws IOException {
        Path db = dir.resolve("new-warehouse.db");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            CommandRun run = CommandRun.of("serve", "--db", db.toString(), "--port", String.valueOf(port))
                    .assertRefused(5, "serve", "--port " + port);
            assertTrue(run.err().contains("in use"), run.err());
        }
        assertFalse(Files.exists(db), "no database before the port is bound");
        assertFalse(Files.exists(dir.resolve("new-warehouse.db-wal")), "no WAL file either");
    }

    @Test
    void portInUseInARealProcessPrintsOneLineAndNoLog() throws Exception {
        Path err = dir.resolve("serve.err");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            // At the operator's log level: no log line may come with the refusal.
            try (ChildJvm serve = start(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=info"),
                    "serve", "--db", dir.resolve("warehouse.db").toString(), "--port", String.valueOf(port))) {
                assertEquals(5, serve.awaitExit(TIMEOUT));
            }
            List<String> lines = Files.readAllLines(err);
            assertEquals(1, lines.size(), "one line: " + lines);
            assertTrue(lines.get(0).startsWith("serve: --port " + port + " on 127.0.0.1 cannot be bound: "), lines.get(0));
            assertTrue(lines.get(0).contains("in use"), lines.get(0));
        }
    }

    @Test
    void databaseThatIsADirectoryIsABadOptionValue() throws IOException {
        Path db = Files.createDirectory(dir.resolve("a-directory"));
        CommandRun.of("serve", "--db", db.toString()).assertRefused(2, "serve", "--db " + db);
    }

    @Test
    void databaseInAMissingDirectoryIsABadOptionValue() {
        Path db = dir.resolve("missing").resolve("warehouse.db");
        CommandRun.of("serve", "--db", db.toString()).assertRefused(2, "serve", "--db " + db);
        assertFalse(Files.exists(db.getParent()), "the directory is not created");
    }

    @Test
    void readOnlyDatabaseIsUnusable() throws Exception {
        Path db = dir.resolve("warehouse.db");
        WarehouseDatabase.open(db.toString()).close();
        try (ReadOnlyFiles readOnly = new ReadOnlyFiles()) {
            readOnly.make(db);
            CommandRun run = CommandRun.of("serve", "--db", db.toString(), "--port", "0").assertRefused(4, "serve", "--db " + db);
            assertTrue(run.err().contains("read-only"), run.err());
        }
    }

    @Test
    void corruptDatabaseIsUnusable() throws IOException {
        Path db = dir.resolve("warehouse.db");
        byte[] noise = new byte[8192];
        new Random(42).nextBytes(noise);
        Files.write(db, noise);
        CommandRun run = CommandRun.of("serve", "--db", db.toString(), "--port", "0").assertRefused(4, "serve", "--db " + db);
        assertTrue(run.err().contains("not a SQLite database"), run.err());
        assertTrue(Arrays.equals(noise, Files.readAllBytes(db)), "the file is left as it was");
    }

    @Test
    void unreachablePostgresIsUnusableAndItsPasswordIsNotShown() {
        CommandRun run = CommandRun.of("serve", "--db", "postgresql://127.0.0.1:1/test?user=postgres&password=s3cret", "--port", "0")
                .assertRefused(4, "serve", "--db postgresql://127.0.0.1:1/test");
        assertFalse(run.err().contains("s3cret"), run.err());
    }

    @Test
    void unreachableMariaDbIsUnusableAndItsPasswordIsNotShown() {
        CommandRun run = CommandRun.of("serve", "--db", "mariadb://root:s3cret@127.0.0.1:1/test", "--port", "0")
                .assertRefused(4, "serve", "--db mariadb://127.0.0.1:1/test cannot be reached");
        assertFalse(run.err().contains("s3cret"), run.err());
    }

    @Test
    void badOptionValueIsOneLine() {
        CommandRun.of("serve", "--db", dir.resolve("warehouse.db").toString(), "--port", "eighty")
                .assertRefused(2, "serve", "--port");
        CommandRun.of("serve", "--db", dir.resolve("warehouse.db").toString(), "--no-such-option")
                .assertRefused(2, "serve", "--no-such-option");
        assertFalse(Files.exists(dir.resolve("warehouse.db")));
    }

    @Test
    void jdbcSqliteUrlOpensTheFileItNames() throws Exception {
        Path db = dir.resolve("x.db");
        try (ChildJvm serve = start(ChildJvm.FAST_START, "serve", "--db", "jdbc:sqlite:" + db, "--port", "0")) {
            String line = serve.nextLine(TIMEOUT);
            assertTrue(line.startsWith("warehouse listening on "), line);
            assertTrue(Files.isRegularFile(db), "the file the URL names: " + line);
            serve.terminate();
            serve.awaitExit(TIMEOUT);
        }
        try (var names = Files.list(dir)) {
            assertFalse(names.anyMatch(path -> path.getFileName().toString().startsWith("jdbc")), "no file named as the URL");
        }
    }

    @Test
    void bareWordDatabaseIsRefusedBeforeThePortIsBound() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            for (String word : new String[] {"mysql", "warehouse", "jdbc:sqlite:", "jdbc:sqlite::memory:"}) {
                CommandRun run = CommandRun.of("serve", "--db", word, "--port", String.valueOf(taken.getLocalPort()))
                        .assertRefused(2, "serve", "--db " + word);
                assertTrue(run.err().contains("jdbc:sqlite:FILE"), run.err());
            }
        }
        assertFalse(Files.exists(Path.of("mysql")) || Files.exists(Path.of("warehouse")), "no file created");
    }

    @Test
    void durationsTakeIsoOrTheShortForm() throws IOException {
        Path db = dir.resolve("warehouse.db");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            // Refused for the port, so the options were accepted.
            CommandRun.of("serve", "--db", db.toString(), "--retention", "30d", "--purge-every", "90m",
                    "--sender-max-resend-age", "12h", "--port", String.valueOf(taken.getLocalPort()))
                    .assertRefused(5, "serve", "--port");
        }
        for (String bad : new String[] {"30x", "30", "thirty days", "P"}) {
            CommandRun run = CommandRun.of("serve", "--db", db.toString(), "--retention", bad)
                    .assertRefused(2, "serve", "--retention");
            assertTrue(run.err().contains("ISO-8601, e.g. P30D, or 30d"), run.err());
        }
        assertFalse(Files.exists(db));
    }

    @Test
    void settingMistakesNameTheOptionNotTheField() {
        String db = dir.resolve("warehouse.db").toString();
        String[][] cases = {{"--threads", "0"}, {"--drop-ack-rate", "2"}, {"--port", "70000"}, {"--bind", "nosuch.invalid"},
                {"--token", " "}};
        for (String[] mistake : cases) {
            CommandRun.of("serve", "--db", db, mistake[0], mistake[1]).assertRefused(2, "serve", mistake[0] + " ");
        }
        CommandRun run = CommandRun.of("serve", "--db", db, "--retention", "PT1M", "--port", "0")
                .assertRefused(2, "serve", "--retention");
        assertTrue(run.err().contains("clockSkewMargin (PT10M)"), run.err());
        assertFalse(Files.exists(dir.resolve("warehouse.db")));
    }

    @Test
    void defaultPortIsTheOneTheReceiverUrlExamplesName() {
        CommandRun help = CommandRun.of("serve", "--help");
        assertTrue(help.out().replaceAll("\\s+", " ").contains("The port (default 8080)"), help.out());
        String publish = CommandRun.of("publish", "--help").out();
        assertTrue(publish.replaceAll("\\s+", "").contains("--to=URLThereceiver,ashttp://HOST:PORT,forexamplehttp://127.0.0.1:8080"),
                publish);
    }

    @Test
    void helpListsTheExitCodes() {
        CommandRun help = CommandRun.of("serve", "--help");
        assertEquals(0, help.exitCode());
        assertTrue(help.out().contains("Exit codes:"), help.out());
        for (String code : List.of("0", "2", "4", "5")) {
            assertTrue(Pattern.compile("(?m)^\\s+" + code + "\\s+\\S").matcher(help.out()).find(),
                    "exit code " + code + " listed: " + help.out());
        }
    }
}
