package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A small HTTP client for tests: sends raw requests and reads JSON answers. */
public final class Http {

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final URI base;

    public Http(URI base) {
        this.base = base;
    }

    /** A response, its body as text. */
    public record Answer(int status, String body, HttpResponse<String> raw) {
        public JsonNode json() {
            try {
                return ProtocolV1.JSON.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    public Answer postJson(String body) {
        return send(request(ProtocolV1.RECEIPTS).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    public Answer receipt(String id, long qty) {
        return postJson("{\"id\":\"" + id + "\",\"qty\":" + qty + "}");
    }

    /** A receipt with an origin time, given as it goes into the JSON string. */
    public Answer receipt(String id, long qty, String origin) {
        return postJson("{\"id\":\"" + id + "\",\"qty\":" + qty + ",\"origin\":\"" + origin + "\"}");
    }

    public Answer get(String path) {
        return send(request(path).GET());
    }

    public HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30));
    }

    public Answer send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(response.statusCode(), response.body(), response);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
