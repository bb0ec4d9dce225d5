package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.http.Http;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve} as a user runs it: a separate process, stopped with SIGTERM. */
class ServeCommandTest {

    private static final Pattern URL = Pattern.compile("http://127\\.0\\.0\\.1:\\d+");

    @TempDir
    Path dir;

    @Test
    void servesUntilSigtermAndLogsIdsButNeverQuantities() throws Exception {
        Path err = dir.resolve("serve.err");
        Process serve = ChildJvm.start(null, err, "serve", "--db", dir.resolve("warehouse.db").toString());
        try (BufferedReader out = new BufferedReader(new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8))) {
            String line = out.readLine();
            Matcher url = URL.matcher(String.valueOf(line));
            assertTrue(url.find(), "first line names the address: " + line);

            Http http = new Http(URI.create(url.group()));
            assertEquals(200, http.receipt("probe-1", 7654321).status());
            assertEquals(200, http.receipt("probe-1", 7654321).status());
            assertEquals(409, http.receipt("probe-1", 7654329).status());
            assertEquals(400, http.postJson("{\"id\":\"probe-2\",\"qty\":7654322,\"note\":\"secret-payload\"}").status());
            assertEquals(7654321, http.get("/stock").json().get("total").longValue());

            // SIGTERM; unlike Process.destroy, this leaves the pipe open for the last line.
            assertTrue(serve.toHandle().destroy());
            assertTrue(serve.waitFor(30, TimeUnit.SECONDS), "stopped after SIGTERM");
            assertEquals("warehouse stopped", out.readLine(), "the shutdown hook ran");
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
        Path out = dir.resolve("serve.out");
        Path err = dir.resolve("serve.err");
        Process serve = ChildJvm.start(out, err, "serve", "--db", dir.resolve("warehouse.db").toString(), "--bind", "0.0.0.0");
        assertTrue(serve.waitFor(60, TimeUnit.SECONDS));
        assertNotEquals(0, serve.exitValue());
        String message = Files.readString(err);
        assertTrue(message.contains("refusing to listen on 0.0.0.0 without a token"), message);
        assertFalse(Files.exists(dir.resolve("warehouse.db")), "refused before opening anything");
    }

    @Test
    void refusesADatabaseUrlItCannotOpen() throws Exception {
        Path err = dir.resolve("serve.err");
        Process serve = ChildJvm.start(dir.resolve("serve.out"), err, "serve", "--db", "mysql://db.example/warehouse");
        assertTrue(serve.waitFor(60, TimeUnit.SECONDS));
        assertNotEquals(0, serve.exitValue());
        assertTrue(Files.readString(err).contains("--db mysql://... is not supported"));
    }

    @Test
    void refusesARetentionShorterThanTheSendersResendAge() throws Exception {
        Path err = dir.resolve("serve.err");
        Process serve = ChildJvm.start(dir.resolve("serve.out"), err, "serve", "--db", dir.resolve("warehouse.db").toString(),
                "--retention", "P7D", "--sender-max-resend-age", "P7D", "--purge-every", "PT1H");
        assertTrue(serve.waitFor(60, TimeUnit.SECONDS));
        assertNotEquals(0, serve.exitValue());
        String message = Files.readString(err);
        System.out.println("serve refused a short retention:\n" + message.lines().findFirst().orElse("").indent(2));
        assertTrue(message.contains("refusing to start: retention (PT168H) must be at least senderMaxResendAge (PT168H)"
                + " plus clockSkewMargin (PT10M)"), message);
        assertFalse(Files.readString(dir.resolve("serve.out")).contains("listening"), "never listened");
    }
}
