package dev.idempotent.inbox.examples.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.StockLevel;
import dev.idempotent.inbox.examples.Warehouse;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Clients that send a request slowly, or stop half-way, over raw loopback sockets. They must not
 * keep the receiver from answering anyone else, and they lose their connection once the read
 * timeout has passed.
 */
class SlowClientTest {

    /** How long a test's client waits for an answer: generous, a bound on a hang, not a speed. */
    private static final Duration PATIENCE = Duration.ofSeconds(5);
    /** As many slow clients as the receiver has threads for the warehouse by default. */
    private static final int SLOW_CLIENTS = ReceiverSettings.DEFAULT_THREADS;
    private static final String RECEIPT = "{\"id\":\"snack-7\",\"qty\":7}";

    @TempDir
    Path dir;

    private Warehouse warehouse;
    private WarehouseServer server;
    private final List<RawClient> slowClients = new ArrayList<>();

    @BeforeEach
    void open() {
        warehouse = Warehouse.open(dir.resolve("warehouse.db"));
    }

    @AfterEach
    void close() throws IOException {
        for (RawClient client : slowClients) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
        warehouse.close();
    }

    @Test
    void normalRequestIsAnsweredWhileSlowClientsHoldHalfSentBodies() throws IOException {
        server = WarehouseServer.start(warehouse, ReceiverSettings.loopback());
        for (int i = 0; i < SLOW_CLIENTS; i++) {
            RawClient slow = slowClient();
            // The interim answer shows that the receiver has read the head and now waits for the body.
            slow.send(postHead(40, "Expect: 100-continue\r\n"));
            assertEquals(100, slow.readResponse().status());
            slow.send("{\"id\":\"slow-" + i + "\",");
        }

        Http http = new Http(server.uri());
        Http.Answer answer = http.send(http.request(ProtocolV1.RECEIPTS).timeout(PATIENCE)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(RECEIPT)));
        assertEquals(200, answer.status(), answer.body());
        assertEquals(new StockLevel(7, 1), warehouse.stock());
    }

    @Test
    void slowPostsRefusedForTheirTokenDoNotHoldTheReceiver() throws IOException {
        server = WarehouseServer.start(warehouse, ReceiverSettings.loopback().withToken("s3cret"));
        List<RawClient.Response> refusals = new ArrayList<>();
        for (int i = 0; i < SLOW_CLIENTS; i++) {
            RawClient slow = slowClient();
            slow.send(postHead(40, "") + "{\"id\":\"slow-" + i + "\",");
            refusals.add(slow.readResponse());
        }

        Http http = new Http(server.uri());
        Http.Answer stock = http.send(http.request(ProtocolV1.STOCK).timeout(PATIENCE)
                .header("Authorization", "Bearer s3cret").GET());
        assertEquals(200, stock.status(), stock.body());
        assertEquals("{\"total\":0,\"receipts\":0}", stock.body());
        for (RawClient.Response refused : refusals) {
            assertEquals(401, refused.status());
            assertEquals("close", refused.headers().get("connection"), "the unread body ends the connection");
        }
    }

    @Test
    void requestStillIncompleteAfterTheReadTimeoutLosesItsConnection() throws IOException {
        server = WarehouseServer.start(warehouse, ReceiverSettings.loopback().withReadTimeout(Duration.ofMillis(500)));
        RawClient halfHead = slowClient().send("POST /receipts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-");
        RawClient halfBody = slowClient().send(postHead(40, "Expect: 100-continue\r\n"));
        assertEquals(100, halfBody.readResponse().status());
        halfBody.send("{\"id\":\"snack-7\",");

        assertTrue(halfHead.closedByServer(), "closed, without an answer");
        assertTrue(halfBody.closedByServer(), "closed, without an answer");
        assertEquals(new StockLevel(0, 0), warehouse.stock());
        assertEquals(0, server.metrics().requests(), "cut off before the receiver judged them");
    }

    @Test
    void moreSlowClientsThanConnectionsDelayANormalRequestOnlyUntilTheirReadTimeout() throws IOException {
        server = WarehouseServer.start(warehouse, ReceiverSettings.loopback()
                .withThreads(1).withConnections(2).withReadTimeout(Duration.ofMillis(500)));
        for (int i = 0; i < 4; i++) {
            slowClient().send(postHead(40, "") + "{\"id\":\"slow-" + i + "\",");
        }

        Http http = new Http(server.uri());
        // Behind four slow clients on two connections: served once two rounds of them were cut off.
        Http.Answer answer = http.send(http.request(ProtocolV1.RECEIPTS).timeout(PATIENCE.multipliedBy(2))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(RECEIPT)));
        assertEquals(200, answer.status(), answer.body());
        for (RawClient slow : slowClients) {
            assertTrue(slow.closedByServer());
        }
        assertEquals(new StockLevel(7, 1), warehouse.stock());
    }

    private RawClient slowClient() throws IOException {
        RawClient client = new RawClient(server.uri(), PATIENCE);
        slowClients.add(client);
        return client;
    }

    private static String postHead(int contentLength, String extraHeaders) {
        return "POST /receipts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + contentLength + "\r\n" + extraHeaders + "\r\n";
    }
}
