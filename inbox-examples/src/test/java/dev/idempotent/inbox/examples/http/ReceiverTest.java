package dev.idempotent.inbox.examples.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idempotent.inbox.examples.StockLevel;
import dev.idempotent.inbox.examples.Warehouse;
import java.io.IOException;
import java.net.InetAddress;
import java.net.http.HttpRequest;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReceiverTest {

    @TempDir
    Path dir;

    private Warehouse warehouse;
    private WarehouseServer server;
    private Http http;

    @BeforeEach
    void start() throws IOException {
        warehouse = Warehouse.open(dir.resolve("warehouse.db"));
        server = WarehouseServer.start(warehouse, ReceiverSettings.loopback());
        http = new Http(server.uri());
    }

    @AfterEach
    void stop() {
        server.close();
        warehouse.close();
    }

    @Test
    void listensOnAnEphemeralLoopbackPort() {
        assertTrue(server.uri().toString().startsWith("http://127.0.0.1:"), server.uri().toString());
        assertFalse(server.uri().toString().endsWith(":0"));
    }

    @Test
    void seedTableOverHttp() {
        Http.Answer first = http.receipt("snack-7", 7);
        assertAck(first, "snack-7", true);
        assertStock(7, 1);

        Http.Answer again = http.receipt("snack-7", 7);
        assertAck(again, "snack-7", false);
        assertStock(7, 1);

        Http.Answer conflict = http.receipt("snack-7", 8);
        assertEquals(409, conflict.status());
        assertEquals("{\"protocol\":1,\"id\":\"snack-7\",\"accepted\":false,\"error\":\"conflict\","
                + "\"message\":\"this id was received before with another qty; the first shipment is kept\"}", conflict.body());
        assertStock(7, 1);

        Http.Answer other = http.receipt("snack-8", 7);
        assertAck(other, "snack-8", true);
        assertStock(14, 2);

        JsonNode stock = http.get("/stock").json();
        assertEquals(14, stock.get("total").asLong());
        assertEquals(2, stock.get("receipts").asLong());
        System.out.printf("seed table over HTTP: 4 requests, %d applied, total %d%n",
                server.metrics().appliedEffects(), warehouse.total());
    }

    @Test
    void duplicateIsAcceptedButNotApplied() {
        http.receipt("snack-7", 7);
        Http.Answer duplicate = http.receipt("snack-7", 7);
        assertEquals(200, duplicate.status());
        assertEquals("{\"protocol\":1,\"id\":\"snack-7\",\"accepted\":true,\"applied\":false}", duplicate.body());
        assertEquals(1, server.metrics().requests(RequestOutcome.DUPLICATE));
        assertEquals(1, server.metrics().appliedEffects());
    }

    @Test
    void conflictIsRefusedAndTheTotalKept() {
        http.receipt("snack-7", 7);
        Http.Answer conflict = http.receipt("snack-7", 8);
        assertEquals(409, conflict.status());
        assertEquals(false, conflict.json().get("accepted").booleanValue());
        assertEquals("conflict", conflict.json().get("error").textValue());
        assertStock(7, 1);
    }

    static Stream<Arguments> badBodies() {
        return Stream.of(
                Arguments.of("malformed JSON", "{\"id\":\"snack-7\",\"qty\":7", "malformed_json", false),
                Arguments.of("empty body", "", "malformed_json", false),
                Arguments.of("not an object", "[\"snack-7\",7]", "not_an_object", false),
                Arguments.of("trailing content", "{\"id\":\"snack-7\",\"qty\":7} {}", "malformed_json", false),
                Arguments.of("duplicate key", "{\"id\":\"snack-7\",\"qty\":7,\"qty\":8}", "malformed_json", false),
                Arguments.of("qty as decimal", "{\"id\":\"snack-7\",\"qty\":7.0}", "invalid_qty", true),
                Arguments.of("qty as string", "{\"id\":\"snack-7\",\"qty\":\"7\"}", "invalid_qty", true),
                Arguments.of("qty zero", "{\"id\":\"snack-7\",\"qty\":0}", "invalid_qty", true),
                Arguments.of("qty negative", "{\"id\":\"snack-7\",\"qty\":-7}", "invalid_qty", true),
                Arguments.of("qty too large", "{\"id\":\"snack-7\",\"qty\":2147483648}", "invalid_qty", true),
                Arguments.of("qty null", "{\"id\":\"snack-7\",\"qty\":null}", "invalid_qty", true),
                Arguments.of("qty missing", "{\"id\":\"snack-7\"}", "missing_qty", true),
                Arguments.of("id missing", "{\"qty\":7}", "missing_id", false),
                Arguments.of("id a number", "{\"id\":7,\"qty\":7}", "invalid_id", false),
                Arguments.of("id empty", "{\"id\":\"\",\"qty\":7}", "invalid_id", false),
                Arguments.of("id blank", "{\"id\":\"   \",\"qty\":7}", "invalid_id", false),
                Arguments.of("id with a control character", "{\"id\":\"snack\\n7\",\"qty\":7}", "invalid_id", false),
                Arguments.of("id too long", "{\"id\":\"" + "x".repeat(256) + "\",\"qty\":7}", "invalid_id", false),
                Arguments.of("unknown field", "{\"id\":\"snack-7\",\"qty\":7,\"colour\":\"red\"}", "unknown_field", true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badBodies")
    void badBodyIsRefusedWith400AndChangesNothing(String name, String body, String error, boolean echoesId) {
        http.receipt("snack-1", 1);
        Http.Answer answer = http.postJson(body);
        assertEquals(400, answer.status(), answer.body());
        JsonNode json = answer.json();
        assertEquals(1, json.get("protocol").intValue());
        assertEquals(false, json.get("accepted").booleanValue());
        assertEquals(error, json.get("error").textValue());
        assertTrue(json.get("message").textValue().length() > 5);
        assertEquals(echoesId, json.has("id"), answer.body());
        if (echoesId) {
            assertEquals("snack-7", json.get("id").textValue());
        }
        assertUnchanged();
    }

    static Stream<Arguments> notUtf8Bodies() {
        String receipt = "{\"id\":\"snack-7\",\"qty\":7}";
        byte[] utf8 = receipt.getBytes(StandardCharsets.UTF_8);
        return Stream.of(
                Arguments.of("UTF-16LE", receipt.getBytes(StandardCharsets.UTF_16LE)),
                Arguments.of("UTF-16 with a byte order mark", receipt.getBytes(StandardCharsets.UTF_16)),
                Arguments.of("UTF-32BE", receipt.getBytes(Charset.forName("UTF-32BE"))),
                Arguments.of("UTF-8 with a byte order mark", concat(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}, utf8)),
                Arguments.of("an overlong UTF-8 sequence", "{\"id\":\"snack-\u00C0\u00AF\",\"qty\":7}"
                        .getBytes(StandardCharsets.ISO_8859_1)),
                Arguments.of("a byte that is never UTF-8", "{\"id\":\"snack-\u00FF\",\"qty\":7}"
                        .getBytes(StandardCharsets.ISO_8859_1)),
                Arguments.of("an encoded surrogate", "{\"id\":\"snack-\u00ED\u00A0\u0080\",\"qty\":7}"
                        .getBytes(StandardCharsets.ISO_8859_1)),
                Arguments.of("a NUL byte", "{\"id\":\"snack-7\",\u0000\"qty\":7}".getBytes(StandardCharsets.UTF_8)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notUtf8Bodies")
    void bodyThatIsNotUtf8IsRefusedWith400AndChangesNothing(String name, byte[] body) {
        http.receipt("snack-1", 1);
        Http.Answer answer = http.send(http.request(ProtocolV1.RECEIPTS).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
        assertEquals(400, answer.status(), answer.body());
        JsonNode json = answer.json();
        assertEquals(1, json.get("protocol").intValue());
        assertEquals(false, json.get("accepted").booleanValue());
        assertEquals("invalid_encoding", json.get("error").textValue());
        assertFalse(json.has("id"), answer.body());
        assertUnchanged();
    }

    @Test
    void contentEncodingOtherThanIdentityIs415() {
        http.receipt("snack-1", 1);
        for (String encoding : List.of("gzip", "deflate", "identity, gzip", "")) {
            Http.Answer answer = http.send(http.request(ProtocolV1.RECEIPTS).header("Content-Type", "application/json")
                    .header("Content-Encoding", encoding)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"snack-7\",\"qty\":7}")));
            assertEquals(415, answer.status(), encoding);
            assertEquals("unsupported_content_encoding", answer.json().get("error").textValue());
        }
        assertUnchanged();
        Http.Answer identity = http.send(http.request(ProtocolV1.RECEIPTS).header("Content-Type", "application/json")
                .header("Content-Encoding", "Identity")
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"snack-7\",\"qty\":7}")));
        assertAck(identity, "snack-7", true);
    }

    static Stream<Arguments> malformedChunkedBodies() {
        return Stream.of(
                Arguments.of("a chunk size that is not hexadecimal", "zz\r\n{\"id\":\"snack-7\",\"qty\":7}\r\n0\r\n\r\n"),
                Arguments.of("a chunk longer than its size", "3\r\n{\"id\":\"snack-7\",\"qty\":7}\r\n0\r\n\r\n"),
                Arguments.of("no final chunk", "18\r\n{\"id\":\"snack-7\",\"qty\":7}\r\n"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformedChunkedBodies")
    void malformedChunkedBodyIsRefusedWith400(String name, String chunks) throws IOException {
        http.receipt("snack-1", 1);
        try (RawClient raw = new RawClient(server.uri(), Duration.ofSeconds(10))) {
            raw.send("POST /receipts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n" + chunks);
            // The client sends nothing more: a body without its final chunk ends at the end of the stream.
            raw.shutdownOutput();
            RawClient.Response answer = raw.readResponse();
            assertEquals(400, answer.status(), new String(answer.body(), StandardCharsets.UTF_8));
            assertEquals("close", answer.headers().get("connection"));
            JsonNode json = answer.json();
            assertEquals(1, json.get("protocol").intValue());
            assertEquals(false, json.get("accepted").booleanValue());
            assertEquals("malformed_body", json.get("error").textValue());
        }
        assertUnchanged();
    }

    @Test
    void wellFormedChunkedBodyIsAccepted() throws IOException {
        try (RawClient raw = new RawClient(server.uri(), Duration.ofSeconds(10))) {
            raw.send("POST /receipts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\nc\r\n{\"id\":\"snack\r\nc\r\n-7\",\"qty\":7}\r\n0\r\n\r\n");
            RawClient.Response answer = raw.readResponse();
            assertEquals(200, answer.status(), new String(answer.body(), StandardCharsets.UTF_8));
        }
        assertStock(7, 1);
    }

    @Test
    void originInTheFutureIs400AndChangesNothing() {
        http.receipt("snack-1", 1);
        Instant now = Instant.now();
        Http.Answer future = http.receipt("snack-7", 7, now.plus(Duration.ofDays(2)).toString());
        assertEquals(400, future.status(), future.body());
        JsonNode json = future.json();
        assertEquals("origin_in_future", json.get("error").textValue());
        assertEquals("snack-7", json.get("id").textValue(), "the id is valid, so the refusal names it");
        assertEquals(false, json.get("accepted").booleanValue());
        assertEquals("{\"total\":1,\"receipts\":1}", http.get(ProtocolV1.STOCK).body());
        assertUnchanged();

        assertAck(http.receipt("snack-7", 7, now.toString()), "snack-7", true);
        assertStock(8, 2);
    }

    @Test
    void longestIdIsAccepted() {
        String id = "x".repeat(255);
        assertAck(http.receipt(id, 3), id, true);
    }

    @Test
    void wrongContentTypeIs415() {
        http.receipt("snack-1", 1);
        for (String type : List.of("text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1")) {
            Http.Answer answer = http.send(http.request(ProtocolV1.RECEIPTS).header("Content-Type", type)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"snack-7\",\"qty\":7}")));
            assertEquals(415, answer.status(), type);
            assertEquals("unsupported_media_type", answer.json().get("error").textValue());
        }
        Http.Answer none = http.send(http.request(ProtocolV1.RECEIPTS)
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"snack-7\",\"qty\":7}")));
        assertEquals(415, none.status());
        Http.Answer withCharset = http.send(http.request(ProtocolV1.RECEIPTS).header("Content-Type", "application/json; charset=UTF-8")
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"snack-9\",\"qty\":1}")));
        assertEquals(200, withCharset.status());
        assertStock(2, 2);
    }

    @Test
    void bodyOver64KiBIs413() {
        http.receipt("snack-1", 1);
        String padding = " ".repeat(ProtocolV1.MAX_BODY_BYTES);
        Http.Answer answer = http.postJson("{\"id\":\"snack-7\",\"qty\":7}" + padding);
        assertEquals(413, answer.status());
        assertEquals("payload_too_large", answer.json().get("error").textValue());
        assertUnchanged();
        String justFits = "{\"id\":\"snack-7\",\"qty\":7}";
        assertEquals(200, http.postJson(justFits + " ".repeat(ProtocolV1.MAX_BODY_BYTES - justFits.length())).status());
    }

    @Test
    void wrongMethodIs405AndUnknownPathIs404() {
        http.receipt("snack-1", 1);
        Http.Answer get = http.get(ProtocolV1.RECEIPTS);
        assertEquals(405, get.status());
        assertEquals("POST", get.raw().headers().firstValue("Allow").orElseThrow());
        Http.Answer put = http.send(http.request(ProtocolV1.RECEIPTS).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString("{\"id\":\"snack-7\",\"qty\":7}")));
        assertEquals(405, put.status());
        Http.Answer postStock = http.send(http.request(ProtocolV1.STOCK).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"snack-7\",\"qty\":7}")));
        assertEquals(405, postStock.status());
        Http.Answer unknown = http.send(http.request("/receipts/snack-7").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"snack-7\",\"qty\":7}")));
        assertEquals(404, unknown.status());
        assertEquals("not_found", unknown.json().get("error").textValue());
        assertUnchanged();
    }

    @Test
    void lockTimeoutIs503WithRetryAfterAndChangesNothing() throws Exception {
        server.close();
        warehouse.close();
        Path file = dir.resolve("busy.db");
        warehouse = Warehouse.open(file, builder -> builder.busyTimeout(java.time.Duration.ofMillis(100)));
        server = WarehouseServer.start(warehouse, ReceiverSettings.loopback());
        http = new Http(server.uri());
        http.receipt("snack-1", 1);
        try (var lockHolder = java.sql.DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
                var statement = lockHolder.createStatement()) {
            statement.execute("BEGIN IMMEDIATE");
            Http.Answer busy = http.receipt("snack-7", 7);
            assertEquals(503, busy.status(), busy.body());
            assertEquals("1", busy.raw().headers().firstValue("Retry-After").orElseThrow());
            assertEquals("busy", busy.json().get("error").textValue());
            assertEquals("snack-7", busy.json().get("id").textValue());
            assertEquals(false, busy.json().get("accepted").booleanValue());
            statement.execute("ROLLBACK");
        }
        assertUnchanged();
        assertEquals(1, server.metrics().requests(RequestOutcome.BUSY));
        assertAck(http.receipt("snack-7", 7), "snack-7", true);
    }

    @Test
    void metricsCountRequestsAndAppliedEffectsApart() {
        http.receipt("snack-7", 7);
        http.receipt("snack-7", 7);
        http.receipt("snack-7", 8);
        http.postJson("{}");
        Http.Answer metrics = http.get(ProtocolV1.METRICS);
        assertEquals(200, metrics.status());
        assertTrue(metrics.raw().headers().firstValue("Content-Type").orElseThrow().startsWith("text/plain; version=0.0.4"));
        String text = metrics.body();
        assertTrue(text.contains("warehouse_requests_total{outcome=\"applied\"} 1\n"), text);
        assertTrue(text.contains("warehouse_requests_total{outcome=\"duplicate\"} 1\n"), text);
        assertTrue(text.contains("warehouse_requests_total{outcome=\"conflict\"} 1\n"), text);
        assertTrue(text.contains("warehouse_requests_total{outcome=\"invalid\"} 1\n"), text);
        assertTrue(text.contains("warehouse_requests_total{outcome=\"busy\"} 0\n"), text);
        assertTrue(text.contains("warehouse_requests_total{outcome=\"failed\"} 0\n"), text);
        assertTrue(text.contains("warehouse_applied_effects_total 1\n"), text);
        assertTrue(text.contains("warehouse_stock_total 7\n"), text);
    }

    @Test
    void tokenIsRequiredWhenSet() throws IOException {
        server.close();
        server = WarehouseServer.start(warehouse, ReceiverSettings.loopback().withToken("s3cret"));
        http = new Http(server.uri());
        String receipt = "{\"id\":\"snack-7\",\"qty\":7}";
        Http.Answer none = http.postJson(receipt);
        assertEquals(401, none.status());
        assertEquals("Bearer", none.raw().headers().firstValue("WWW-Authenticate").orElseThrow());
        Http.Answer wrong = http.send(http.request(ProtocolV1.RECEIPTS).header("Content-Type", "application/json")
                .header("Authorization", "Bearer s3cre").POST(HttpRequest.BodyPublishers.ofString(receipt)));
        assertEquals(401, wrong.status());
        assertEquals(401, http.get(ProtocolV1.STOCK).status());
        assertStock(0, 0);
        Http.Answer right = http.send(http.request(ProtocolV1.RECEIPTS).header("Content-Type", "application/json")
                .header("Authorization", "Bearer s3cret").POST(HttpRequest.BodyPublishers.ofString(receipt)));
        assertAck(right, "snack-7", true);
    }

    @Test
    void nonLoopbackAddressWithoutTokenIsRefused() throws IOException {
        InetAddress anyAddress = InetAddress.getByName("0.0.0.0");
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> ReceiverSettings.loopback().withAddress(anyAddress));
        assertTrue(refused.getMessage().contains("without a token"), refused.getMessage());
        ReceiverSettings withToken = ReceiverSettings.loopback().withToken("s3cret").withAddress(anyAddress);
        assertEquals(anyAddress, withToken.address());
    }

    private static byte[] concat(byte[] first, byte[] second) {
        byte[] both = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        return both;
    }

    private void assertAck(Http.Answer answer, String id, boolean applied) {
        assertEquals(200, answer.status(), answer.body());
        assertEquals("{\"protocol\":1,\"id\":" + ProtocolV1.JSON.valueToTree(id) + ",\"accepted\":true,\"applied\":" + applied + "}",
                answer.body());
    }

    private void assertStock(long total, long receipts) {
        assertEquals(new StockLevel(total, receipts), warehouse.stock());
    }

    /** After the one shipment every refusal test starts with. */
    private void assertUnchanged() {
        assertStock(1, 1);
        assertEquals(1, server.metrics().appliedEffects());
        assertEquals(1, warehouse.stats().applied());
    }
}
