package dev.idempotent.inbox.examples;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A proxy in front of a real receiver that answers the first requests itself, with bodies the test
 * gives, without forwarding them, and forwards every later request unchanged: the model's proxy
 * that answers a request on its own.
 */
final class AnsweringProxy implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final HttpClient client = HttpClient.newHttpClient();
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger forwarded = new AtomicInteger();

    /**
     * @param target the real receiver
     * @param ownAnswers the 200 bodies the proxy gives to its first requests, one each, in order
     */
    AnsweringProxy(URI target, List<String> ownAnswers) {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/receipts", exchange -> {
            try {
                byte[] body = exchange.getRequestBody().readAllBytes();
                int number = requests.getAndIncrement();
                Optional<String> own = number < ownAnswers.size() ? Optional.of(ownAnswers.get(number)) : Optional.empty();
                if (own.isPresent()) {
                    respond(exchange, 200, own.get().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                } else {
                    forwarded.incrementAndGet();
                    HttpResponse<byte[]> answer = client.send(HttpRequest.newBuilder(target.resolve("/receipts"))
                                    .header("Content-Type", exchange.getRequestHeaders().getFirst("Content-Type"))
                                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    respond(exchange, answer.statusCode(), answer.body());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                exchange.close();
            }
        });
        server.setExecutor(executor);
        server.start();
    }

    private static void respond(HttpExchange exchange, int status, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** How many requests reached the real receiver through the proxy. */
    int forwarded() {
        return forwarded.get();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
