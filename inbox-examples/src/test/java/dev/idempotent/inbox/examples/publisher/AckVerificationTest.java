package dev.idempotent.inbox.examples.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The publisher trusts nothing but a verified ACK: checked against a receiver that answers badly on purpose. */
class AckVerificationTest {

    private static final int MAX_ATTEMPTS = 3;

    @TempDir
    Path dir;

    private Outbox outbox;

    @BeforeEach
    void open() {
        outbox = Outbox.open(dir.resolve("outbox.db"));
    }

    @AfterEach
    void close() {
        outbox.close();
    }

    static Stream<Arguments> unverifiable200s() {
        return Stream.of(
                Arguments.of("another id", "{\"protocol\":1,\"id\":\"snack-8\",\"accepted\":true,\"applied\":true}"),
                Arguments.of("accepted as a string", "{\"protocol\":1,\"id\":\"%s\",\"accepted\":\"true\",\"applied\":true}"),
                Arguments.of("accepted as a number", "{\"protocol\":1,\"id\":\"%s\",\"accepted\":1,\"applied\":true}"),
                Arguments.of("accepted false", "{\"protocol\":1,\"id\":\"%s\",\"accepted\":false}"),
                Arguments.of("accepted null", "{\"protocol\":1,\"id\":\"%s\",\"accepted\":null}"),
                Arguments.of("no accepted", "{\"protocol\":1,\"id\":\"%s\",\"applied\":true}"),
                Arguments.of("no protocol", "{\"id\":\"%s\",\"accepted\":true,\"applied\":true}"),
                Arguments.of("protocol as a string", "{\"protocol\":\"1\",\"id\":\"%s\",\"accepted\":true}"),
                Arguments.of("protocol 2", "{\"protocol\":2,\"id\":\"%s\",\"accepted\":true}"),
                Arguments.of("no id", "{\"protocol\":1,\"accepted\":true}"),
                Arguments.of("a JSON array", "[{\"protocol\":1,\"id\":\"%s\",\"accepted\":true}]"),
                Arguments.of("a non-JSON body", "OK"),
                Arguments.of("truncated JSON", "{\"protocol\":1,\"id\":\"%s\",\"accepted\":true"),
                Arguments.of("an empty body", ""));
    }

    @ParameterizedTest(name = "200 with {0}")
    @MethodSource("unverifiable200s")
    void unverifiable200IsNeverMarkedAckedAndIsResent(String name, String body) throws Exception {
        try (FakeReceiver receiver = FakeReceiver.answering(200, body)) {
            outbox.enqueue("snack-7", 7);
            DeliveryReport report = publisher(receiver).deliverPending();

            assertEquals(0, report.acked());
            assertEquals(List.of("snack-7", "snack-7", "snack-7"), receiver.received(), "resent up to the limit");
            OutboxItem item = outbox.find("snack-7").orElseThrow();
            assertEquals(ItemState.EXHAUSTED, item.state(), "parked, never acked, never dropped");
            assertEquals(MAX_ATTEMPTS, item.attempts());
            assertTrue(item.reason().startsWith("exhausted after 3 attempts; last: 200"), item.reason());
        }
    }

    @Test
    void verifiedAckIsMarkedAfterEarlierBadAnswers() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        try (FakeReceiver receiver = new FakeReceiver((exchange, id) -> {
            if (calls.incrementAndGet() < 3) {
                FakeReceiver.respond(exchange, 200, "{\"protocol\":1,\"id\":\"" + id + "\",\"accepted\":\"true\"}");
            } else {
                FakeReceiver.respond(exchange, 200, "{\"protocol\":1,\"id\":\"" + id + "\",\"accepted\":true,\"applied\":false}");
            }
        })) {
            outbox.enqueue("snack-7", 7);
            DeliveryReport report = publisher(receiver).deliverPending();
            assertEquals(1, report.acked());
            assertEquals(1, report.duplicatesConfirmed());
            assertEquals(3, report.attempts());
            assertEquals(2, report.resends());
            assertEquals(ItemState.ACKED, outbox.find("snack-7").orElseThrow().state());
        }
    }

    @ParameterizedTest(name = "HTTP {0}")
    @ValueSource(ints = {400, 409, 413, 415, 422})
    void definiteRefusalIsParkedWithItsReasonAndNeverResent(int status) throws Exception {
        try (FakeReceiver receiver = FakeReceiver.answering(status,
                "{\"protocol\":1,\"id\":\"%s\",\"accepted\":false,\"error\":\"nope\",\"message\":\"refused for a test\"}")) {
            outbox.enqueue("snack-7", 7);
            DeliveryReport report = publisher(receiver).deliverPending();
            assertEquals(1, report.rejected());
            assertEquals(List.of("snack-7"), receiver.received());
            OutboxItem item = outbox.find("snack-7").orElseThrow();
            assertEquals(ItemState.REJECTED, item.state());
            assertEquals("HTTP " + status + " nope: refused for a test", item.reason());
            assertEquals(List.of(item), outbox.parked(), "visible to the operator");

            publisher(receiver).deliverPending();
            assertEquals(1, receiver.received().size(), "a later run does not resend it");
        }
    }

    static Stream<Arguments> refusalsThatAreNotThisReceiversAnswer() {
        return Stream.of(
                Arguments.of("a proxy's HTML page", 400, "<html><body><h1>400 Bad Request</h1></body></html>"),
                Arguments.of("an empty body", 400, ""),
                Arguments.of("a protocol v1 answer for another id", 400,
                        "{\"protocol\":1,\"id\":\"snack-8\",\"accepted\":false,\"error\":\"invalid_qty\",\"message\":\"no\"}"),
                Arguments.of("a protocol v1 answer without an id", 400,
                        "{\"protocol\":1,\"accepted\":false,\"error\":\"malformed_json\",\"message\":\"no\"}"),
                Arguments.of("JSON without a protocol", 409, "{\"id\":\"%s\",\"accepted\":false,\"error\":\"conflict\"}"),
                Arguments.of("protocol 2", 409, "{\"protocol\":2,\"id\":\"%s\",\"accepted\":false,\"error\":\"conflict\"}"),
                Arguments.of("accepted true", 422, "{\"protocol\":1,\"id\":\"%s\",\"accepted\":true,\"error\":\"stale\"}"),
                Arguments.of("no error code", 413, "{\"protocol\":1,\"id\":\"%s\",\"accepted\":false}"));
    }

    @ParameterizedTest(name = "HTTP {1} with {0}")
    @MethodSource("refusalsThatAreNotThisReceiversAnswer")
    void refusalWithoutAProtocolV1AnswerForThisIdIsUncertainAndResent(String name, int status, String body)
            throws Exception {
        try (FakeReceiver receiver = FakeReceiver.answering(status, body)) {
            outbox.enqueue("snack-7", 7);
            DeliveryReport report = publisher(receiver).deliverPending();
            assertEquals(0, report.rejected());
            assertEquals(List.of("snack-7", "snack-7", "snack-7"), receiver.received(), "resent up to the limit");
            OutboxItem item = outbox.find("snack-7").orElseThrow();
            assertEquals(ItemState.EXHAUSTED, item.state());
            assertTrue(item.reason().startsWith("exhausted after 3 attempts; last: HTTP " + status), item.reason());
        }
    }

    @Test
    void originInTheFutureIsParkedWithItsReason() throws Exception {
        try (FakeReceiver receiver = FakeReceiver.answering(400, "{\"protocol\":1,\"id\":\"%s\",\"accepted\":false,"
                + "\"error\":\"origin_in_future\",\"message\":\"origin is later than the warehouse's clock\"}")) {
            outbox.enqueue("snack-7", 7);
            DeliveryReport report = publisher(receiver).deliverPending();
            assertEquals(1, report.rejected());
            assertEquals(List.of("snack-7"), receiver.received());
            OutboxItem item = outbox.find("snack-7").orElseThrow();
            assertEquals(ItemState.REJECTED, item.state());
            assertEquals("HTTP 400 origin_in_future: origin is later than the warehouse's clock", item.reason());
        }
    }

    @Test
    void refusedTokenIsUncertainAndResentByDefault() throws Exception {
        try (FakeReceiver receiver = FakeReceiver.answering(401,
                "{\"protocol\":1,\"accepted\":false,\"error\":\"unauthorized\",\"message\":\"a valid bearer token is required\"}")) {
            outbox.enqueue("snack-7", 7);
            DeliveryReport report = publisher(receiver).deliverPending();
            assertEquals(0, report.rejected());
            assertEquals(MAX_ATTEMPTS, receiver.received().size(), "a corrected token could still deliver it");
            OutboxItem item = outbox.find("snack-7").orElseThrow();
            assertEquals(ItemState.EXHAUSTED, item.state());
            assertTrue(item.reason().contains("HTTP 401"), item.reason());
        }
    }

    @Test
    void refusedTokenIsParkedWithThatReasonWhenAsked() throws Exception {
        try (FakeReceiver receiver = FakeReceiver.answering(401,
                "{\"protocol\":1,\"accepted\":false,\"error\":\"unauthorized\",\"message\":\"a valid bearer token is required\"}")) {
            outbox.enqueue("snack-7", 7);
            PublisherSettings parking = settings(receiver).withOnAuthFailure(PublisherSettings.AuthFailure.PARK);
            DeliveryReport report = new Publisher(outbox, parking, DeliveryListener.NONE).deliverPending();
            assertEquals(1, report.rejected());
            assertEquals(List.of("snack-7"), receiver.received());
            OutboxItem item = outbox.find("snack-7").orElseThrow();
            assertEquals(ItemState.REJECTED, item.state());
            assertEquals("HTTP 401 unauthorized: a valid bearer token is required; token refused, parked as"
                    + " --park-on-auth-failure asks", item.reason());
        }
    }

    @ParameterizedTest(name = "HTTP {0}")
    @ValueSource(ints = {500, 502, 503, 404, 429})
    void otherStatusesAreUncertainAndResent(int status) throws Exception {
        try (FakeReceiver receiver = FakeReceiver.answering(status, "{\"protocol\":1,\"accepted\":false,\"error\":\"busy\"}")) {
            outbox.enqueue("snack-7", 7);
            publisher(receiver).deliverPending();
            assertEquals(MAX_ATTEMPTS, receiver.received().size());
            assertEquals(ItemState.EXHAUSTED, outbox.find("snack-7").orElseThrow().state());
        }
    }

    @Test
    void connectionClosedBeforeAResponseIsUncertain() throws Exception {
        try (FakeReceiver receiver = new FakeReceiver((exchange, id) -> {
            // Closing an exchange without a response closes the connection: the lost ACK.
        })) {
            outbox.enqueue("snack-7", 7);
            publisher(receiver).deliverPending();
            assertEquals(MAX_ATTEMPTS, receiver.received().size());
            OutboxItem item = outbox.find("snack-7").orElseThrow();
            assertEquals(ItemState.EXHAUSTED, item.state());
            assertTrue(item.reason().endsWith("connection closed before a response"), item.reason());
        }
    }

    @Test
    void noResponseInTimeIsUncertain() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (FakeReceiver receiver = new FakeReceiver((exchange, id) -> {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        })) {
            outbox.enqueue("snack-7", 7);
            Publisher publisher = new Publisher(outbox, settings(receiver).withMaxAttempts(2)
                    .withRequestTimeout(Duration.ofMillis(200)), DeliveryListener.NONE);
            publisher.deliverPending();
            release.countDown();
            assertEquals(2, receiver.received().size());
            OutboxItem item = outbox.find("snack-7").orElseThrow();
            assertEquals(ItemState.EXHAUSTED, item.state());
            assertTrue(item.reason().endsWith("no response in time"), item.reason());
        }
    }

    @Test
    void firstSendsGoOutInEnqueueOrder() throws Exception {
        try (FakeReceiver receiver = FakeReceiver.answering(200, "{\"protocol\":1,\"id\":\"%s\",\"accepted\":true,\"applied\":true}")) {
            for (String id : List.of("zebra", "apple", "mango", "kiwi", "fig")) {
                outbox.enqueue(id, 1);
            }
            new Publisher(outbox, settings(receiver).withWindow(1), DeliveryListener.NONE).deliverPending();
            assertEquals(List.of("zebra", "apple", "mango", "kiwi", "fig"), receiver.received());
        }
    }

    @Test
    void oneSlowItemDoesNotStallTheOthers() throws Exception {
        CountDownLatch othersDone = new CountDownLatch(4);
        AtomicInteger slowWasReleased = new AtomicInteger();
        try (FakeReceiver receiver = new FakeReceiver((exchange, id) -> {
            if (id.equals("slow")) {
                try {
                    if (othersDone.await(30, TimeUnit.SECONDS)) {
                        slowWasReleased.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            } else {
                othersDone.countDown();
            }
            FakeReceiver.respond(exchange, 200, "{\"protocol\":1,\"id\":\"" + id + "\",\"accepted\":true,\"applied\":true}");
        })) {
            for (String id : List.of("slow", "b", "c", "d", "e")) {
                outbox.enqueue(id, 1);
            }
            DeliveryReport report = new Publisher(outbox, settings(receiver).withWindow(2), DeliveryListener.NONE).deliverPending();
            assertEquals(1, slowWasReleased.get(), "the other four were delivered while the slow one was in flight");
            assertEquals(5, report.acked());
            // Two senders start together, so the first two may arrive in either order; the one
            // that is free then sends the rest in enqueue order.
            List<String> received = receiver.received();
            assertEquals(java.util.Set.of("slow", "b"), java.util.Set.copyOf(received.subList(0, 2)));
            assertEquals(List.of("c", "d", "e"), received.subList(2, 5));
        }
    }

    private Publisher publisher(FakeReceiver receiver) {
        return new Publisher(outbox, settings(receiver), DeliveryListener.NONE);
    }

    private static PublisherSettings settings(FakeReceiver receiver) {
        return PublisherSettings.to(receiver.uri())
                .withMaxAttempts(MAX_ATTEMPTS)
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(10))
                .withJitterSeed(42);
    }
}
