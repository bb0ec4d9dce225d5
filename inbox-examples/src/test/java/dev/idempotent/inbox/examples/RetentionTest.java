package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.examples.http.Http;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.RequestOutcome;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import dev.idempotent.inbox.examples.publisher.DeliveryListener;
import dev.idempotent.inbox.examples.publisher.DeliveryReport;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.Outbox;
import dev.idempotent.inbox.examples.publisher.OutboxItem;
import dev.idempotent.inbox.examples.publisher.Publisher;
import dev.idempotent.inbox.examples.publisher.PublisherSettings;
import dev.idempotent.inbox.testkit.MutableClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Retention in the example, over real HTTP with a moved clock: a warehouse that keeps rows for 7
 * days, a purge, and resends that carry their origin time.
 */
class RetentionTest {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");
    private static final Duration RETENTION = Duration.ofDays(7);

    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock(T0);
    private Warehouse warehouse;
    private WarehouseServer server;
    private Http http;

    @BeforeEach
    void start() throws IOException {
        warehouse = Warehouse.open(dir.resolve("warehouse.db"), builder -> builder.clock(clock).retention(RETENTION));
        server = WarehouseServer.start(warehouse, ReceiverSettings.loopback());
        http = new Http(server.uri());
    }

    @AfterEach
    void stop() {
        server.close();
        warehouse.close();
    }

    @Test
    void resendOlderThanTheHorizonIsRefusedAsStaleAndANewShipmentIsApplied() {
        assertEquals(200, http.receipt("crate-1", 5, T0.toString()).status());
        assertTrue(http.receipt("crate-1", 5, T0.toString()).json().get("accepted").booleanValue(), "a duplicate, kept");

        clock.advance(Duration.ofDays(8));
        PurgeReport purge = warehouse.retention().purge();
        assertEquals(1, purge.rowsPurged());
        Instant horizon = T0.plus(Duration.ofDays(1));
        assertEquals(horizon, purge.horizon());
        assertEquals(new StockLevel(5, 0), warehouse.stock());

        Http.Answer stale = http.receipt("crate-1", 5, T0.toString());
        assertEquals(422, stale.status(), stale.body());
        JsonNode body = stale.json();
        assertEquals(1, body.get("protocol").intValue());
        assertEquals("crate-1", body.get("id").textValue());
        assertFalse(body.get("accepted").booleanValue());
        assertEquals("stale", body.get("error").textValue());
        assertTrue(body.get("message").textValue().contains("nothing changed"), body.toString());
        assertEquals(new StockLevel(5, 0), warehouse.stock(), "the stale resend changed nothing");

        // The skew margin (10 minutes by default) widens the window: just inside it is stale too.
        assertEquals(422, http.receipt("crate-2", 3, horizon.plus(Duration.ofMinutes(9)).toString()).status());
        assertEquals(200, http.receipt("crate-2", 3, horizon.plus(Duration.ofMinutes(11)).toString()).status());
        Http.Answer fresh = http.receipt("crate-3", 4, clock.instant().toString());
        assertEquals(200, fresh.status());
        assertTrue(fresh.json().get("applied").booleanValue());
        assertEquals(new StockLevel(12, 2), warehouse.stock());

        String metrics = http.get("/metrics").body();
        System.out.printf("retention over HTTP: purged %d, horizon %s; stale refusals %d, applied %d, total %d%n",
                purge.rowsPurged(), purge.horizon(), server.metrics().requests(RequestOutcome.STALE),
                server.metrics().appliedEffects(), warehouse.total());
        assertTrue(metrics.contains("warehouse_requests_total{outcome=\"stale\"} 2\n"), metrics);
        assertTrue(metrics.contains("warehouse_stale_refusals_total 2\n"), metrics);
        assertTrue(metrics.contains("warehouse_inbox_rows_purged_total 1\n"), metrics);
        assertTrue(metrics.contains("warehouse_inbox_horizon_seconds " + horizon.getEpochSecond() + "\n"), metrics);
        assertTrue(metrics.contains("warehouse_inbox_oldest_row_age_seconds 0\n"), metrics);
        assertTrue(metrics.contains("warehouse_applied_effects_total 3\n"), metrics);
    }

    @Test
    void withoutAnOriginTimeAPurgedIdIsAppliedAgain() {
        // The documented hole: nothing tells the warehouse how old a resend without origin is.
        assertEquals(200, http.receipt("crate-1", 5).status());
        clock.advance(Duration.ofDays(8));
        warehouse.retention().purge();
        Http.Answer again = http.receipt("crate-1", 5);
        assertEquals(200, again.status());
        assertTrue(again.json().get("applied").booleanValue());
        assertEquals(new StockLevel(10, 1), warehouse.stock());
    }

    @Test
    void metricsLeaveOutTheHorizonAndOldestRowAgeUntilThereAreAny() {
        String metrics = http.get("/metrics").body();
        assertTrue(metrics.contains("warehouse_inbox_rows_purged_total 0\n"), metrics);
        assertTrue(metrics.contains("warehouse_stale_refusals_total 0\n"), metrics);
        assertFalse(metrics.contains("warehouse_inbox_horizon_seconds"), metrics);
        assertFalse(metrics.contains("warehouse_inbox_oldest_row_age_seconds"), metrics);
        http.receipt("crate-1", 5, T0.toString());
        clock.advance(Duration.ofHours(2));
        assertTrue(http.get("/metrics").body().contains("warehouse_inbox_oldest_row_age_seconds 7200\n"));
    }

    @Test
    void publisherParksAStaleRefusalAsRejectedAndNeverResendsIt() throws Exception {
        try (Outbox outbox = Outbox.open(dir.resolve("outbox.db"), clock)) {
            // Enqueued at T0, but the publisher was down for 8 days, longer than the retention.
            outbox.enqueue("late-1", 4);
            assertEquals(200, http.receipt("early-1", 2, T0.toString()).status());
            clock.advance(Duration.ofDays(8));
            assertEquals(1, warehouse.retention().purge().rowsPurged());

            Publisher publisher = new Publisher(outbox, settings(), DeliveryListener.NONE);
            DeliveryReport report = publisher.deliverPending();
            assertEquals(1, report.rejected(), report.toString());
            assertEquals(0, report.acked());
            assertEquals(1, report.attempts(), "one request, no resend");
            OutboxItem late = outbox.find("late-1").orElseThrow();
            assertEquals(ItemState.REJECTED, late.state());
            assertEquals(T0, late.origin());
            assertTrue(late.reason().startsWith("HTTP 422 stale"), late.reason());
            assertEquals(1, server.metrics().requests(RequestOutcome.STALE));
            assertEquals(new StockLevel(2, 0), warehouse.stock(), "nothing applied");

            long requestsBefore = server.metrics().requests();
            assertEquals(0, publisher.deliverPending().items());
            assertEquals(requestsBefore, server.metrics().requests(), "never resent");
            System.out.printf("publisher on 422: %s parked as %s: %s%n", late.id(), late.state(), late.reason());
        }
    }

    @ParameterizedTest(name = "origin {0}")
    @ValueSource(strings = {"123", "null", "true", "{}", "[\"2026-01-05T10:00:00Z\"]", "\"\"", "\"2026-01-05\"",
            "\"2026-01-05T10:00:00\"", "\"2026-01-05T10:00:00+01:00\"", "\"2026-01-05T10:00:00.123+00:00\"",
            "\"2026-01-05 10:00:00Z\"", "\"2026-01-05t10:00:00z\"", "\"2026-13-05T10:00:00Z\"", "\"2026-02-30T10:00:00Z\"",
            "\"2026-01-05T24:00:00Z\"", "\"2026-01-05T10:00:60Z\"", "\"2026-01-05T10:00:00.1234567890Z\"",
            "\"2026-01-05T10:00:00.Z\"", "\" 2026-01-05T10:00:00Z\"", "\"1767607200\"", "\"+2026-01-05T10:00:00Z\"",
            "\"\uff12\uff10\uff12\uff16-01-05T10:00:00Z\""})
    void badOriginIsRefusedWith400AndChangesNothing(String origin) {
        Http.Answer answer = http.postJson("{\"id\":\"bad-origin\",\"qty\":3,\"origin\":" + origin + "}");
        assertEquals(400, answer.status(), answer.body());
        assertEquals("invalid_origin", answer.json().get("error").textValue());
        assertEquals("bad-origin", answer.json().get("id").textValue());
        assertEquals(new StockLevel(0, 0), warehouse.stock());
        assertEquals(1, server.metrics().requests(RequestOutcome.INVALID));
    }

    @ParameterizedTest(name = "origin {0}")
    @ValueSource(strings = {"2026-01-05T10:00:00Z", "2026-01-05T10:00:00.1Z", "2026-01-05T10:00:00.123Z",
            "2026-01-05T10:00:00.123456789Z", "2024-02-29T23:59:59Z"})
    void originInUtcWithUpToNineFractionDigitsIsAccepted(String origin) {
        assertEquals(200, http.receipt("good-origin", 3, origin).status());
    }

    @Test
    void unknownFieldsAreStillRefusedBesideAnOrigin() {
        Http.Answer answer = http.postJson("{\"id\":\"x-1\",\"qty\":3,\"origin\":\"2026-01-05T10:00:00Z\",\"sent\":1}");
        assertEquals(400, answer.status());
        assertEquals("unknown_field", answer.json().get("error").textValue());
    }

    private PublisherSettings settings() {
        return PublisherSettings.to(server.uri())
                .withMaxAttempts(5)
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(10))
                .withJitterSeed(3);
    }
}
