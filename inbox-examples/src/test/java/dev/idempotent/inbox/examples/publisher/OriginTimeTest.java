package dev.idempotent.inbox.examples.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idempotent.inbox.testkit.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The publisher's origin time: stamped once, sent unchanged, and the limit of resending. */
class OriginTimeTest {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00.123Z");

    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock(T0);

    @Test
    void originIsTheFirstEnqueueTimeAndEveryResendCarriesIt() throws Exception {
        Path file = dir.resolve("outbox.db");
        try (Outbox outbox = Outbox.open(file, clock)) {
            assertEquals(Enqueued.ADDED, outbox.enqueue("o-1", 3));
            clock.advance(Duration.ofHours(1));
            assertEquals(Enqueued.ALREADY_ENQUEUED, outbox.enqueue("o-1", 3));
        }
        clock.advance(Duration.ofHours(1));
        AtomicInteger requests = new AtomicInteger();
        // Two uncertain answers, then an ACK: three requests for one item, across a restart of the outbox.
        try (FakeReceiver receiver = new FakeReceiver((exchange, id) -> FakeReceiver.respond(exchange,
                        requests.incrementAndGet() <= 2 ? 503 : 200,
                        "{\"protocol\":1,\"id\":\"" + id + "\",\"accepted\":true,\"applied\":true}"));
                Outbox reopened = Outbox.open(file, clock)) {
            assertEquals(T0, reopened.find("o-1").orElseThrow().origin());
            DeliveryListener later = attempt -> clock.advance(Duration.ofMinutes(5));
            DeliveryReport report = new Publisher(reopened, settings(receiver), later).deliverPending();
            assertEquals(1, report.acked());
            List<JsonNode> bodies = receiver.bodies();
            assertEquals(3, bodies.size());
            for (JsonNode body : bodies) {
                assertEquals("2026-01-05T10:00:00.123Z", body.get("origin").textValue(), body.toString());
            }
        }
    }

    @Test
    void itemOlderThanTheMaxResendAgeIsParkedAsExhaustedWithoutAnotherRequest() throws Exception {
        try (FakeReceiver receiver = FakeReceiver.answering(503, "{\"protocol\":1,\"accepted\":false,\"error\":\"busy\"}");
                Outbox outbox = Outbox.open(dir.resolve("outbox.db"), clock)) {
            outbox.enqueue("o-2", 3);
            // Each uncertain attempt takes 40 minutes of the clock; the third would be 80 minutes after the origin.
            DeliveryListener later = attempt -> clock.advance(Duration.ofMinutes(40));
            PublisherSettings settings = settings(receiver).withMaxAttempts(10).withMaxResendAge(Duration.ofHours(1));
            DeliveryReport report = new Publisher(outbox, settings, later).deliverPending();

            assertEquals(1, report.exhausted());
            assertEquals(2, report.attempts());
            assertEquals(2, receiver.received().size());
            OutboxItem item = outbox.find("o-2").orElseThrow();
            assertEquals(ItemState.EXHAUSTED, item.state());
            assertEquals(2, item.attempts(), "the parking is no attempt");
            assertTrue(item.reason().contains("older than the max resend age PT1H"), item.reason());
        }
    }

    @Test
    void severalReceiversTakeItemsInTurnAndAnUncertainAttemptMovesOn() throws Exception {
        try (FakeReceiver down = FakeReceiver.answering(503, "");
                FakeReceiver up = FakeReceiver.answering(200, "{\"protocol\":1,\"id\":\"%s\",\"accepted\":true,\"applied\":true}");
                Outbox outbox = Outbox.open(dir.resolve("outbox.db"), clock)) {
            for (int i = 1; i <= 4; i++) {
                outbox.enqueue("r-" + i, i);
            }
            PublisherSettings settings = PublisherSettings.to(List.of(down.uri(), up.uri()))
                    .withBackoff(Duration.ofMillis(1), Duration.ofMillis(5)).withWindow(1).withJitterSeed(1);
            DeliveryReport report = new Publisher(outbox, settings, DeliveryListener.NONE).deliverPending();

            assertEquals(4, report.acked());
            // Items 1 and 3 go to the second receiver first, 2 and 4 to the first, then on to the second.
            assertEquals(List.of("r-2", "r-4"), down.received());
            assertEquals(List.of("r-1", "r-2", "r-3", "r-4"), up.received().stream().sorted().toList());
            assertEquals(2, report.resends());
        }
    }

    private static PublisherSettings settings(FakeReceiver receiver) {
        return PublisherSettings.to(receiver.uri()).withBackoff(Duration.ofMillis(1), Duration.ofMillis(5)).withJitterSeed(1);
    }
}
