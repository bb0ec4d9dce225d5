package dev.idempotent.inbox.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.examples.StockLevel;
import dev.idempotent.inbox.examples.Warehouse;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import dev.idempotent.inbox.examples.publisher.AckVerifier;
import dev.idempotent.inbox.examples.publisher.Verdict;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The example warehouse over HTTP against the same warehouse called in-process, both with 32
 * concurrent senders, each side on its own SQLite file (WAL, {@code synchronous=FULL}: the defaults
 * {@code serve} opens with).
 *
 * <p>{@link #http}: the receiver {@code serve} runs ({@link WarehouseServer} with its default
 * settings: 127.0.0.1, an ephemeral port, 8 request threads), started in this JVM. Each of the 32
 * JMH threads is one publisher with its own {@link HttpClient} (HTTP/1.1), sending one request at a
 * time, so each keeps exactly one kept-alive connection: 32 concurrent connections ({@code -p
 * client=SHARED} gives them one client instead; see {@link PublisherConnection#client}). The
 * publishers run in the same JVM, so they share the CPUs with the receiver. A message counts
 * only once its response is a verified ACK, checked as the publisher checks it (status 200, a JSON
 * object with {@code "protocol": 1}, this id, {@code "accepted": true} as a JSON boolean) and, as
 * every id is new, {@code "applied": true}; anything else throws and fails the run.
 *
 * <p>{@link #inProcess}: 32 threads call {@link Warehouse#receive} directly, the very method the
 * receiver calls for each request: {@code inbox.apply} with the same effect, on a warehouse opened
 * the same way. The score of each is confirmed messages per second; the goal is about their quotient.
 * The two run one after the other in one invocation.
 *
 * <p>Both send the shipment's origin time, as the publisher always does. At the end of a trial the
 * committed stock must hold exactly the counted messages, or the teardown throws.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
// On 2 CPUs shared with the clients, the JIT compiles the HTTP client and server code for about
// 50 s before the HTTP rate settles; a shorter warm-up measures the compiler.
@Warmup(iterations = 15, time = 4)
@Measurement(iterations = 5, time = 4)
@Threads(HttpWarehouseBenchmark.SENDERS)
public class HttpWarehouseBenchmark {

    static final int SENDERS = 32;
    static final int QUANTITY = 7;

    /**
     * The receiver logs one line per receipt at INFO: about a hundred thousand lines a run, relayed
     * through JMH's host process and burying its report. They are kept to warnings unless the
     * command line sets this property ({@code -jvmArgsAppend -D...=info}) to include them.
     */
    static final String RECEIVER_LOG_LEVEL = "org.slf4j.simpleLogger.log.dev.idempotent.inbox.examples.http";

    /** One warehouse file and the count of messages its side confirmed. */
    @State(Scope.Benchmark)
    public abstract static class WarehouseFile {

        @Param({"DISK"})
        public Location location;

        private final AtomicLong sequence = new AtomicLong();
        private final LongAdder confirmed = new LongAdder();
        private long seed;
        private Path dir;
        private Warehouse warehouse;
        /** One origin time for every message: the value does not change the work, only its presence does. */
        private Instant origin;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            open(location.parent());
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            close();
        }

        void open(Path parent) throws IOException {
            dir = Files.createTempDirectory(parent, "inbox-bench-");
            warehouse = Warehouse.open(dir.resolve("warehouse.db"));
            seed = ThreadLocalRandom.current().nextLong();
            origin = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        }

        String nextId() {
            return Ids.random(seed + sequence.incrementAndGet());
        }

        void confirmed() {
            confirmed.increment();
        }

        long confirmedCount() {
            return confirmed.sum();
        }

        Warehouse warehouse() {
            return warehouse;
        }

        Instant origin() {
            return origin;
        }

        /**
         * Checks that the committed stock holds exactly the confirmed messages, then closes the
         * warehouse and deletes its files.
         */
        void close() throws IOException {
            try {
                if (warehouse != null) {
                    StockLevel stock = warehouse.stock();
                    long count = confirmedCount();
                    if (stock.receipts() != count || stock.total() != count * QUANTITY) {
                        throw new IllegalStateException("confirmed " + count + " messages of " + QUANTITY
                                + " but the warehouse holds " + stock);
                    }
                }
            } finally {
                if (warehouse != null) {
                    warehouse.close();
                    warehouse = null;
                }
                if (dir != null) {
                    SqliteState.deleteTree(dir);
                    dir = null;
                }
            }
        }
    }

    /** The warehouse behind its HTTP receiver. */
    @State(Scope.Benchmark)
    public static class Receiver extends WarehouseFile {

        /** Request threads of the receiver; 8 is what {@code serve} uses ({@code ReceiverSettings.loopback()}). */
        @Param({"8"})
        public int serverThreads;

        private WarehouseServer server;
        private URI receipts;

        @Override
        void open(Path parent) throws IOException {
            if (System.getProperty(RECEIVER_LOG_LEVEL) == null) {
                System.setProperty(RECEIVER_LOG_LEVEL, "warn");
            }
            super.open(parent);
            server = WarehouseServer.start(warehouse(), ReceiverSettings.loopback().withThreads(serverThreads));
            receipts = server.uri().resolve(ProtocolV1.RECEIPTS);
        }

        URI receipts() {
            return receipts;
        }

        @Override
        void close() throws IOException {
            // Stop taking requests first, so that every commit is in before the stock is checked.
            if (server != null) {
                server.close();
                server = null;
            }
            super.close();
        }
    }

    /** The warehouse called directly. */
    @State(Scope.Benchmark)
    public static class Direct extends WarehouseFile {
    }

    /** One publisher, sending one request at a time. */
    @State(Scope.Thread)
    public static class PublisherConnection {

        /**
         * {@code OWN}: each publisher has its own client, so exactly one kept-alive connection.
         * {@code SHARED}: all publishers share one client, whose pool then holds one connection per
         * request in flight (32 as well), with one selector thread instead of 32: shows what the
         * clients' own threads cost on the machine the receiver runs on.
         */
        @Param({"OWN"})
        public String client;

        HttpClient http;

        @Setup(Level.Trial)
        public void setUp() {
            http = switch (client) {
                case "OWN" -> newClient();
                case "SHARED" -> SharedClient.INSTANCE;
                default -> throw new IllegalArgumentException("client must be OWN or SHARED, was " + client);
            };
        }
    }

    /** Created on first use only. */
    private static final class SharedClient {
        static final HttpClient INSTANCE = newClient();
    }

    /** As the example publisher builds its client. */
    static HttpClient newClient() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    /** One shipment over HTTP; returns only after a verified ACK. */
    @Benchmark
    public String http(Receiver receiver, PublisherConnection publisher) throws IOException, InterruptedException {
        String id = receiver.nextId();
        ObjectNode body = ProtocolV1.JSON.createObjectNode();
        body.put("id", id);
        body.put("qty", QUANTITY);
        body.put("origin", receiver.origin().toString());
        HttpRequest request = HttpRequest.newBuilder(receiver.receipts())
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", ProtocolV1.JSON_MEDIA_TYPE)
                .POST(HttpRequest.BodyPublishers.ofByteArray(ProtocolV1.JSON.writeValueAsBytes(body)))
                .build();
        HttpResponse<byte[]> response = publisher.http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        verifyAck(id, response.statusCode(), response.body());
        receiver.confirmed();
        return id;
    }

    /** The same shipment through the receiver's own call, without HTTP. */
    @Benchmark
    public Outcome<Void> inProcess(Direct direct) {
        String id = direct.nextId();
        Outcome<Void> outcome = direct.warehouse().receive(id, QUANTITY, direct.origin());
        if (!outcome.isNewlyApplied()) {
            throw new IllegalStateException("new id " + id + " was not applied: " + outcome);
        }
        direct.confirmed();
        return outcome;
    }

    /**
     * Throws unless the response is the ACK of a newly applied {@code id}, judged by the example
     * publisher's own {@link AckVerifier}; a duplicate's ACK is refused too, as every id sent is new.
     */
    static void verifyAck(String id, int status, byte[] body) {
        Verdict verdict = AckVerifier.classify(id, status, body, Optional.empty());
        if (!(verdict instanceof Verdict.Acked acked) || !acked.applied()) {
            throw notAnAck(id, verdict.toString(), body);
        }
    }

    private static IllegalStateException notAnAck(String id, String problem, byte[] body) {
        return new IllegalStateException("no verified ACK for " + id + ": " + problem + "; body "
                + new String(body, StandardCharsets.UTF_8));
    }
}
