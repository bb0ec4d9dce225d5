package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Writing responses and reading bounded bodies. */
final class Exchanges {

    private Exchanges() {}

    static void sendJson(HttpExchange exchange, int status, ObjectNode body) throws IOException {
        send(exchange, status, "application/json", ProtocolV1.JSON.writeValueAsBytes(body));
    }

    static void sendText(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        send(exchange, status, contentType, body.getBytes(StandardCharsets.UTF_8));
    }

    static void sendRefusal(HttpExchange exchange, Refusal refusal) throws IOException {
        ObjectNode body = ProtocolV1.JSON.createObjectNode();
        body.put("protocol", ProtocolV1.VERSION);
        if (refusal.id() != null) {
            body.put("id", refusal.id());
        }
        body.put("accepted", false);
        body.put("error", refusal.error());
        body.put("message", refusal.message());
        sendJson(exchange, refusal.status(), body);
    }

    /**
     * The body, or a 413 refusal when it is longer than {@link ProtocolV1#MAX_BODY_BYTES}. Reads at
     * most one byte past the limit, so an oversized body is never held in memory.
     */
    static byte[] readBody(HttpExchange exchange) throws IOException, Refusal.Thrown {
        String declared = exchange.getRequestHeaders().getFirst("Content-Length");
        if (declared != null && tooLong(declared)) {
            throw tooLarge();
        }
        try (InputStream in = exchange.getRequestBody()) {
            byte[] body = in.readNBytes(ProtocolV1.MAX_BODY_BYTES + 1);
            if (body.length > ProtocolV1.MAX_BODY_BYTES) {
                throw tooLarge();
            }
            return body;
        }
    }

    private static boolean tooLong(String declared) {
        try {
            return Long.parseLong(declared.trim()) > ProtocolV1.MAX_BODY_BYTES;
        } catch (NumberFormatException e) {
            return false; // the server itself rejects a malformed length before we see it
        }
    }

    private static Refusal.Thrown tooLarge() {
        return new Refusal.Thrown(Refusal.of(413, "payload_too_large",
                "the body must be at most " + ProtocolV1.MAX_BODY_BYTES + " bytes"));
    }

    private static void send(HttpExchange exchange, int status, String contentType, byte[] bytes) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
