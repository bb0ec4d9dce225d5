package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.crash.ChildJvm;
import dev.idempotent.inbox.examples.http.Http;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve} as a user runs it: a separate process, stopped with SIGTERM. */
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
                "serve", "--db", dir.resolve("warehouse.db").toString())) {
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
                "--retention", "P7D", "--sender-max-resend-age", "P7D", "--purge-every", "PT1H")) {
            assertNotEquals(0, serve.awaitExit(TIMEOUT));
            out = serve.restOfOutput(TIMEOUT);
        }
        String message = Files.readString(dir.resolve("serve.err"));
        System.out.println("serve refused a short retention:\n" + message.lines().findFirst().orElse("").indent(2));
        assertTrue(message.contains("refusing to start: retention (PT168H) must be at least senderMaxResendAge (PT168H)"
                + " plus clockSkewMargin (PT10M)"), message);
        assertFalse(out.stream().anyMatch(line -> line.contains("listening")), "never listened: " + out);
    }
}
