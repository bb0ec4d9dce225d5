package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.ClosedChannelException;
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
     * Asks the server to close the connection after this response. For a refusal given before the
     * body was read to its end: the connection then holds bytes of a request nobody will read, or
     * framing that cannot be trusted, so it must not carry another request. (On JDK 17 the server
     * still reads up to 64 KiB of the unread body before it closes; that read is bounded by the
     * request's read timeout, see {@link RequestThreads}.)
     */
    static void closeAfterResponse(HttpExchange exchange) {
        exchange.getResponseHeaders().set("Connection", "close");
    }

    /**
     * The body, read to its end; a 413 refusal when it is longer than
     * {@link ProtocolV1#MAX_BODY_BYTES}, a 400 {@code malformed_body} when its framing is broken
     * (a bad chunk, no final chunk, fewer bytes than its {@code Content-Length}). Reads at most one
     * byte past the limit, so an oversized body is never held in memory. Both refusals close the
     * connection after the answer.
     *
     * @throws IOException if the connection was closed, by the read timeout or a stopping server;
     *     no answer can be written then
     */
    static byte[] readBody(HttpExchange exchange) throws IOException, Refusal.Thrown {
        String declared = exchange.getRequestHeaders().getFirst("Content-Length");
        if (declared != null && tooLong(declared)) {
            closeAfterResponse(exchange);
            throw tooLarge();
        }
        byte[] body;
        try {
            body = exchange.getRequestBody().readNBytes(ProtocolV1.MAX_BODY_BYTES + 1);
        } catch (ClosedChannelException e) {
            throw e;
        } catch (IOException e) {
            if (RequestThreads.readTimeoutPassed()) {
                throw e;
            }
            // The JDK server reports broken framing as a plain IOException. If the peer is gone
            // instead, writing this answer fails and is logged as an undelivered response.
            closeAfterResponse(exchange);
            throw new Refusal.Thrown(Refusal.of(400, "malformed_body",
                    "the body could not be read: its chunked framing is broken, or it ended before its length"));
        }
        if (body.length > ProtocolV1.MAX_BODY_BYTES) {
            closeAfterResponse(exchange);
            throw tooLarge();
        }
        return body;
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
