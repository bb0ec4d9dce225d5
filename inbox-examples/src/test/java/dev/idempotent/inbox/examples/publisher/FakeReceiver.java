package dev.idempotent.inbox.examples.publisher;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;

/** A receiver that answers as the test tells it, and writes down the ids it was sent. */
final class FakeReceiver implements AutoCloseable {

    /** How the fake answers one request, given the id it carried. */
    @FunctionalInterface
    interface Answer {
        void answer(HttpExchange exchange, String id) throws IOException;
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final List<String> received = new CopyOnWriteArrayList<>();
    private final List<JsonNode> bodies = new CopyOnWriteArrayList<>();

    FakeReceiver(Answer answer) {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/receipts", exchange -> {
            try {
                JsonNode body = ProtocolV1.JSON.readTree(exchange.getRequestBody().readAllBytes());
                String id = body.get("id").textValue();
                bodies.add(body);
                received.add(id);
                answer.answer(exchange, id);
            } finally {
                exchange.close();
            }
        });
        server.setExecutor(executor);
        server.start();
    }

    /** Always answers {@code status} with {@code body}, where {@code %s} stands for the request's id. */
    static FakeReceiver answering(int status, String body) {
        return new FakeReceiver((exchange, id) -> respond(exchange, status, body.replace("%s", id)));
    }

    static void respond(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** The ids of every request, in arrival order. */
    List<String> received() {
        return List.copyOf(received);
    }

    /** The body of every request, in arrival order. */
    List<JsonNode> bodies() {
        return List.copyOf(bodies);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
