package dev.idempotent.inbox.examples.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The receiver started on an ephemeral port over a fresh SQLite file, driven over real HTTP: a
 * scripted run of shipments, then the stock, the health and the Prometheus page.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class WarehouseApplicationTest {

    private static final Path DIR = temporaryDirectory();

    private static Path temporaryDirectory() {
        try {
            return Files.createTempDirectory("warehouse-spring");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + DIR.resolve("warehouse.db"));
    }

    @AfterAll
    static void removeFiles() throws IOException {
        try (var files = Files.list(DIR)) {
            for (Path file : files.toList()) {
                Files.deleteIfExists(file);
            }
        }
        Files.deleteIfExists(DIR);
    }

    @LocalServerPort
    int port;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> post(String json) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/receipts"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aScriptedRunShowsInTheStockTheHealthAndThePrometheusPage() throws Exception {
        HttpResponse<String> first = post("{\"id\":\"snack-7\",\"qty\":7}");
        assertEquals(200, first.statusCode(), first.body());
        assertTrue(first.body().contains("\"applied\":true"), first.body());

        HttpResponse<String> resent = post("{\"id\":\"snack-7\",\"qty\":7}");
        assertEquals(200, resent.statusCode(), resent.body());
        assertTrue(resent.body().contains("\"applied\":false"), resent.body());

        HttpResponse<String> otherQty = post("{\"id\":\"snack-7\",\"qty\":8}");
        assertEquals(409, otherQty.statusCode(), otherQty.body());

        assertEquals(200, post("{\"id\":\"snack-9\",\"qty\":9}").statusCode());
        assertEquals(400, post("{\"id\":\"snack-0\",\"qty\":0}").statusCode());

        HttpResponse<String> stock = get("/stock");
        assertEquals(200, stock.statusCode());
        assertTrue(stock.body().contains("\"total\":16") && stock.body().contains("\"receipts\":2"), stock.body());

        HttpResponse<String> health = get("/actuator/health");
        assertEquals(200, health.statusCode(), health.body());
        JsonNode inbox = JsonMapper.builder().build().readTree(health.body()).path("components").path("inbox");
        assertEquals("\"UP\"", inbox.path("status").toString(), health.body());
        assertEquals("1", inbox.path("details").path("schemaVersion").toString(), health.body());
        assertEquals("\"" + dev.idempotent.inbox.spi.jdbc.SchemaMigrations.known("inbox") + "\"",
                inbox.path("details").path("schemaLevel").toString(), health.body());
        assertEquals("\"tables inbox_*\"", inbox.path("details").path("tables").toString(), health.body());

        HttpResponse<String> record = get("/actuator/inbox/snack-7");
        assertEquals(200, record.statusCode(), record.body());
        assertTrue(record.body().contains("\"fingerprint\""), record.body());

        HttpResponse<String> prometheus = get("/actuator/prometheus");
        assertEquals(200, prometheus.statusCode());
        assertEquals(2.0, counter(prometheus.body(), "applied"), prometheus.body());
        assertEquals(1.0, counter(prometheus.body(), "duplicate"));
        assertEquals(1.0, counter(prometheus.body(), "conflict"));
    }

    /** The value of {@code inbox_messages_total} for the receipts inbox and {@code outcome}. */
    private static double counter(String page, String outcome) {
        Pattern line = Pattern.compile("^inbox_messages_total\\{([^}]*)\\} (\\S+)$", Pattern.MULTILINE);
        Matcher m = line.matcher(page);
        while (m.find()) {
            String tags = m.group(1);
            if (tags.contains("inbox=\"receipts\"") && tags.contains("outcome=\"" + outcome + "\"")) {
                return Double.parseDouble(m.group(2));
            }
        }
        throw new AssertionError("no inbox_messages_total with outcome=" + outcome + " on the page");
    }
}
