package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idempotent.inbox.examples.StockLevel;
import dev.idempotent.inbox.examples.Warehouse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The warehouse's HTTP receiver, protocol version 1, on the JDK's HTTP server.
 *
 * <ul>
 *   <li>{@code POST /receipts}: receive a shipment; see {@code docs/PROTOCOL.md}.
 *   <li>{@code GET /stock}: {@code {"total": 14, "receipts": 2}}.
 *   <li>{@code GET /metrics}: requests by outcome, applied effects and the inbox's retention
 *       figures, in Prometheus text format.
 * </ul>
 *
 * <p>A request must arrive whole within the settings' read timeout, and clients that send slowly
 * hold reading threads only, never the warehouse's (see {@link ReceiverSettings}). A refusal given
 * before the body was read closes the connection after its answer.
 *
 * <p>Started by {@link #start}, which returns once the server accepts requests, or in two steps by
 * {@link #bind} and {@link Binding#start}. {@link #close}
 * stops accepting, lets running requests finish their transactions, and leaves the warehouse
 * open for its owner to close.
 */
public final class WarehouseServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WarehouseServer.class);

    static {
        // The JDK server writes headers and body separately; with Nagle's algorithm on, a kept-alive
        // connection then waits for the client's delayed ACK (about 40 ms) on every response. The
        // server reads this property once, when its first instance in the JVM is created.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private final Warehouse warehouse;
    private final ReceiverSettings settings;
    private final ReceiverMetrics metrics = new ReceiverMetrics();
    private final ReceiptsHandler receipts;
    private final HttpServer server;
    private final RequestThreads threads;

    private WarehouseServer(Warehouse warehouse, ReceiverSettings settings, HttpServer server) {
        this.warehouse = warehouse;
        this.settings = settings;
        this.threads = new RequestThreads(settings.connections(), settings.threads(), settings.readTimeout());
        this.receipts = new ReceiptsHandler(warehouse, metrics, settings.ackFault(), threads);
        this.server = server;
        server.createContext("/", this::route);
        server.setExecutor(threads);
    }

    /**
     * Binds and starts the receiver for {@code warehouse}.
     *
     * @throws IOException if the address cannot be bound
     */
    public static WarehouseServer start(Warehouse warehouse, ReceiverSettings settings) throws IOException {
        Binding binding = bind(settings);
        try {
            return binding.start(warehouse);
        } catch (RuntimeException e) {
            binding.close();
            throw e;
        }
    }

    /**
     * Binds the settings' address and port without answering yet, so that a caller learns that the
     * port is taken before it opens or creates a database. Connections that arrive meanwhile wait
     * in the backlog until {@link Binding#start} is given the warehouse.
     *
     * @throws java.net.BindException if the port is in use, or the address is not this machine's
     * @throws IOException if the address cannot be bound for another reason
     */
    public static Binding bind(ReceiverSettings settings) throws IOException {
        return new Binding(HttpServer.create(new InetSocketAddress(settings.address(), settings.port()), 0), settings);
    }

    /** An address bound for a receiver that does not answer yet. Closing it releases the port. */
    public static final class Binding implements AutoCloseable {
        private final HttpServer server;
        private final ReceiverSettings settings;
        private boolean started;

        private Binding(HttpServer server, ReceiverSettings settings) {
            this.server = server;
            this.settings = settings;
        }

        /**
         * Starts answering on the bound address for {@code warehouse}; the receiver then owns the
         * address, and {@link WarehouseServer#close} releases it.
         *
         * @throws IllegalStateException if this binding was started or closed before
         */
        public synchronized WarehouseServer start(Warehouse warehouse) {
            if (started) {
                throw new IllegalStateException("already started or closed");
            }
            started = true;
            WarehouseServer receiver = new WarehouseServer(warehouse, settings, server);
            server.start();
            log.info("listening on {} ({})", receiver.uri(), warehouse.describe());
            return receiver;
        }

        /** Releases the address unless a receiver was started on it. */
        @Override
        public synchronized void close() {
            if (!started) {
                started = true;
                server.stop(0);
            }
        }
    }

    /** The base address, for example {@code http://127.0.0.1:50123}. */
    public URI uri() {
        InetSocketAddress bound = server.getAddress();
        String host = bound.getAddress().getHostAddress();
        if (host.contains(":")) {
            host = "[" + host + "]";
        }
        return URI.create("http://" + host + ":" + bound.getPort());
    }

    /** The counters since this receiver started. */
    public ReceiverMetrics metrics() {
        return metrics;
    }

    /** Stops accepting requests and waits up to 10 seconds for running ones to finish. */
    @Override
    public void close() {
        server.stop(0);
        try {
            if (!threads.shutdown(Duration.ofSeconds(10))) {
                log.warn("requests still running after 10 s; stopping anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void route(HttpExchange exchange) {
        try {
            String path = exchange.getRequestURI().getPath();
            boolean isReceipts = ProtocolV1.RECEIPTS.equals(path);
            if (!authorized(exchange)) {
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
                Exchanges.closeAfterResponse(exchange);
                Refusal refusal = Refusal.of(401, "unauthorized", "a valid bearer token is required");
                if (isReceipts) {
                    receipts.refuse(exchange, RequestOutcome.INVALID, refusal);
                } else {
                    Exchanges.sendRefusal(exchange, refusal);
                }
                return;
            }
            String method = isReceipts ? "POST" : "GET";
            if (!isReceipts && !ProtocolV1.STOCK.equals(path) && !ProtocolV1.METRICS.equals(path)) {
                Exchanges.closeAfterResponse(exchange);
                Exchanges.sendRefusal(exchange, Refusal.of(404, "not_found", "no such path; shipments go to POST /receipts"));
            } else if (!method.equals(exchange.getRequestMethod())) {
                exchange.getResponseHeaders().set("Allow", method);
                Exchanges.closeAfterResponse(exchange);
                Refusal refusal = Refusal.of(405, "method_not_allowed", path + " accepts " + method + " only");
                if (isReceipts) {
                    receipts.refuse(exchange, RequestOutcome.INVALID, refusal);
                } else {
                    Exchanges.sendRefusal(exchange, refusal);
                }
            } else if (isReceipts) {
                receipts.handle(exchange);
            } else {
                // A GET's body means nothing here, but it is read within the read timeout: left
                // unread, the server would read it after the answer, without one.
                Exchanges.readBody(exchange);
                if (ProtocolV1.STOCK.equals(path)) {
                    sendStock(exchange);
                } else {
                    sendMetrics(exchange);
                }
            }
        } catch (Refusal.Thrown thrown) {
            try {
                Exchanges.sendRefusal(exchange, thrown.refusal());
            } catch (IOException e) {
                log.debug("response not delivered: {}", e.toString());
            }
        } catch (IOException | UncheckedIOException e) {
            // The peer went away while we answered (for a receipt, one more lost ACK), or its
            // request was cut off at the read timeout, before anything was done.
            log.debug("response not delivered: {}", e.toString());
        } catch (RuntimeException e) {
            log.warn("request failed: {}", e.toString());
        } finally {
            exchange.close();
        }
    }

    private void sendStock(HttpExchange exchange) throws IOException {
        StockLevel stock = threads.inWarehouse(warehouse::stock);
        ObjectNode body = ProtocolV1.JSON.createObjectNode();
        body.put("total", stock.total());
        body.put("receipts", stock.receipts());
        Exchanges.sendJson(exchange, 200, body);
    }

    private void sendMetrics(HttpExchange exchange) throws IOException {
        String text = threads.inWarehouse(() -> {
            StockLevel stock = warehouse.stock();
            return metrics.prometheus(stock.total(), stock.receipts(), warehouse.retention().status());
        });
        Exchanges.sendText(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", text);
    }

    private boolean authorized(HttpExchange exchange) {
        if (settings.token().isEmpty()) {
            return true;
        }
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        byte[] expected = ("Bearer " + settings.token().get()).getBytes(StandardCharsets.UTF_8);
        byte[] given = header == null ? new byte[0] : header.getBytes(StandardCharsets.UTF_8);
        // Constant time, so the token cannot be guessed byte by byte from response times.
        return MessageDigest.isEqual(expected, given);
    }
}
