package dev.idempotent.inbox.examples;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.rabbitmq.client.Connection;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Consumes receipts from a message broker into the warehouse until the process is stopped: the
 * same stock table and inbox as {@code serve}, each message's body the JSON a {@code POST /receipts}
 * takes and its id the receipt's id. On exit it prints the stock as {@code GET /stock} answers it.
 *
 * <p>This class is the broker-neutral part; each broker is a {@link ReceiptSource} of its own.
 */
@Command(name = "consume", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = {"Consumes receipts (protocol v1 JSON bodies, the receipt's id as the message id) from a broker"
                + " into the warehouse until stopped with Ctrl-C or SIGTERM; then prints the stock as GET /stock does.",
                "Each message is acknowledged only after the transaction that applied it has committed."},
        exitCodeListHeading = ExitCodes.HEADING,
        exitCodeList = {" 0:stopped by Ctrl-C or SIGTERM", ExitCodes.USAGE_LINE, ExitCodes.DATABASE_LINE,
                " 5:the broker does not answer within --connect-timeout, the queue cannot be consumed, or the"
                        + " --metrics-port is in use; nothing is created",
                ExitCodes.SOFTWARE_LINE})
final class ConsumeCommand implements Callable<Integer> {

    /** The brokers this build consumes from, as {@code --broker} names them. */
    static final String BROKERS = "rabbitmq, kafka";

    @Spec
    CommandSpec spec;

    @Option(names = "--broker", required = true, paramLabel = "NAME", description = "The broker: " + BROKERS + ".")
    String broker;

    @Option(names = "--uri", paramLabel = "URI", defaultValue = "amqp://guest:guest@127.0.0.1:5672",
            description = "rabbitmq: the broker as amqp://USER:PASSWORD@HOST:PORT[/VHOST] (default ${DEFAULT-VALUE}).")
    String uri;

    @Option(names = "--queue", paramLabel = "NAME",
            description = "rabbitmq: the queue to consume. It must exist; give it a dead-letter exchange, which takes"
                    + " conflicting, malformed and repeatedly failing receipts.")
    String queue;

    @Option(names = "--bootstrap", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:9092",
            description = "kafka: the bootstrap servers (default ${DEFAULT-VALUE}).")
    String bootstrap;

    @Option(names = "--topic", paramLabel = "NAME",
            description = "kafka: the topic to consume; each record's value a receipt, its key the receipt's id.")
    String topic;

    @Option(names = "--group", paramLabel = "NAME", defaultValue = "warehouse",
            description = "kafka: the consumer group (default ${DEFAULT-VALUE}); its positions are kept in --db.")
    String group;

    @Option(names = "--idle-exit", paramLabel = "DURATION",
            description = "Stop once no receipt was acknowledged for this long after the first, as "
                    + DurationOption.ACCEPTED + "; then print the stock as on Ctrl-C.")
    Duration idleExit;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = "10s",
            description = "How long to wait at startup for the broker to answer before exiting with 5, as "
                    + DurationOption.ACCEPTED + " (default ${DEFAULT-VALUE}). Nothing is created before it answers.")
    Duration connectTimeout;

    @Option(names = "--db", required = true, paramLabel = "FILE|URL",
            description = "The warehouse, as serve --db takes it: a SQLite file, postgresql://... or mariadb://...")
    String db;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "1",
            description = "Receipts applied in one transaction and acknowledged together (default ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--prefetch", paramLabel = "N", defaultValue = "100",
            description = "Unacknowledged receipts the broker sends ahead, at least --batch (default ${DEFAULT-VALUE}).")
    int prefetch;

    @Option(names = "--max-attempts", paramLabel = "N", defaultValue = "5",
            description = "Attempts of a receipt whose change fails before it is dead-lettered (default ${DEFAULT-VALUE}).")
    int maxAttempts;

    @Option(names = "--metrics-port", paramLabel = "N",
            description = "Serve Prometheus text at http://127.0.0.1:N/metrics (0: an ephemeral port).")
    Integer metricsPort;

    /**
     * A running consumer of one broker, applying receipts through the warehouse's inbox. Closing it
     * stops consuming after the batch in hand is committed and acknowledged.
     */
    interface ReceiptSource extends AutoCloseable {
        /** Where the receipts come from, without credentials, for messages to people. */
        String describe();

        /** What the consumer did since it started. */
        Counts counts();

        @Override
        void close();
    }

    /**
     * The consumer settings every broker takes.
     *
     * @param batchSize receipts per transaction
     * @param prefetch receipts the broker sends ahead
     * @param maxAttempts attempts of a failing change before the dead letter
     */
    record Settings(int batchSize, int prefetch, int maxAttempts) {}

    /**
     * A consumer's counters, by what the broker was told.
     *
     * @param applied receipts whose change was committed
     * @param duplicates receipts applied before, acknowledged without a change
     * @param acked receipts acknowledged
     * @param deadLettered receipts refused for good: conflicts, malformed ones, repeated failures
     * @param requeued receipts given back to be tried again
     */
    record Counts(long applied, long duplicates, long acked, long deadLettered, long requeued) {}

    @Override
    public Integer call() throws Exception {
        Settings settings = settings();
        Optional<Path> file = sqliteFile();
        if (file.isPresent()) {
            CommandError.requireFileInExistingDirectory(spec.commandLine(), "--db", file.get());
        }
        checkBrokerOptions();
        HttpServer metrics = metricsPort == null ? null : bindMetrics(metricsPort);
        ReceiptSource source;
        Warehouse warehouse;
        try {
            // The broker first: a broker that is not there leaves no database behind.
            Connection rabbit = connectToBroker();
            try {
                warehouse = open(file.isPresent());
            } catch (RuntimeException e) {
                closeQuietly(rabbit);
                throw e;
            }
            try {
                source = start(rabbit, warehouse, settings);
            } catch (RuntimeException e) {
                warehouse.close();
                throw e;
            }
        } catch (RuntimeException e) {
            if (metrics != null) {
                metrics.stop(0);
            }
            throw e;
        }
        if (metrics != null) {
            metrics.createContext(ProtocolV1.METRICS, exchange -> sendMetrics(exchange, warehouse, source));
            metrics.start();
        }
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean stopping = new AtomicBoolean();
        Runnable stop = () -> {
            if (!stopping.compareAndSet(false, true)) {
                return;
            }
            // Finish and acknowledge the batch in hand, then report what is committed.
            source.close();
            if (metrics != null) {
                metrics.stop(0);
            }
            StockLevel stock = warehouse.stock();
            warehouse.close();
            System.out.println(stockJson(stock));
            System.out.flush();
            stopped.countDown();
        };
        Thread hook = new Thread(stop, "consume-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        System.out.println("consuming receipts from " + source.describe() + " into " + warehouse.describe());
        if (metrics != null) {
            System.out.println("metrics on http://127.0.0.1:" + metrics.getAddress().getPort() + ProtocolV1.METRICS);
        }
        System.out.flush();
        if (idleExit != null) {
            awaitIdle(source, stopped);
            stop.run();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // SIGTERM came first: its hook found the work done
            }
        }
        stopped.await();
        return 0;
    }

    /** Returns once nothing was acknowledged for {@code --idle-exit} after the first receipt, or on SIGTERM. */
    private void awaitIdle(ReceiptSource source, CountDownLatch stopped) throws InterruptedException {
        long acked = 0;
        long lastChange = System.nanoTime();
        while (!stopped.await(100, TimeUnit.MILLISECONDS)) {
            long now = source.counts().acked();
            if (now != acked) {
                acked = now;
                lastChange = System.nanoTime();
            } else if (acked > 0 && System.nanoTime() - lastChange > idleExit.toNanos()) {
                return;
            }
        }
    }

    /**
     * Checks that the broker answers within {@code --connect-timeout}: for RabbitMQ, the connection
     * to consume on, the queue checked; for Kafka, whose consumer connects on its own thread, null.
     */
    private Connection connectToBroker() {
        try {
            return switch (broker.toLowerCase(Locale.ROOT)) {
                case "rabbitmq" -> RabbitReceiptSource.connect(uri, queue, connectTimeout);
                case "kafka" -> {
                    KafkaReceiptSource.checkReachable(bootstrap, connectTimeout);
                    yield null;
                }
                default -> throw new IllegalStateException("unchecked broker " + broker);
            };
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private ReceiptSource start(Connection rabbit, Warehouse warehouse, Settings settings) {
        try {
            return switch (broker.toLowerCase(Locale.ROOT)) {
                case "rabbitmq" -> RabbitReceiptSource.start(rabbit, uri, queue, warehouse, settings);
                case "kafka" -> KafkaReceiptSource.start(bootstrap, topic, group, warehouse, settings);
                default -> throw new IllegalStateException("unchecked broker " + broker);
            };
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private static void closeQuietly(Connection connection) {
        if (connection == null) {
            return;
        }
        try {
            connection.close();
        } catch (IOException | RuntimeException e) {
            // Closed already, by the broker or a lost network; nothing is left to release.
        }
    }

    private void checkBrokerOptions() {
        switch (broker.toLowerCase(Locale.ROOT)) {
            case "rabbitmq" -> {
                if (queue == null || queue.isBlank()) {
                    throw new ParameterException(spec.commandLine(), "--broker rabbitmq needs --queue NAME");
                }
            }
            case "kafka" -> {
                if (topic == null || topic.isBlank()) {
                    throw new ParameterException(spec.commandLine(), "--broker kafka needs --topic NAME");
                }
            }
            default -> throw new ParameterException(spec.commandLine(),
                    "--broker must be one of: " + BROKERS + "; was " + broker);
        }
    }

    private Settings settings() {
        if (batch < 1 || batch > 10_000) {
            throw new ParameterException(spec.commandLine(), "--batch must be from 1 to 10000, was " + batch);
        }
        if (prefetch < batch || prefetch > 65_535) {
            throw new ParameterException(spec.commandLine(), "--prefetch must be from --batch (" + batch
                    + ") to 65535, was " + prefetch);
        }
        if (maxAttempts < 1 || maxAttempts > 1000) {
            throw new ParameterException(spec.commandLine(), "--max-attempts must be from 1 to 1000, was " + maxAttempts);
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new ParameterException(spec.commandLine(),
                    "--connect-timeout must be positive, was " + connectTimeout);
        }
        if (idleExit != null && (idleExit.isNegative() || idleExit.isZero())) {
            throw new ParameterException(spec.commandLine(), "--idle-exit must be positive, was " + idleExit);
        }
        if (metricsPort != null && (metricsPort < 0 || metricsPort > 65_535)) {
            throw new ParameterException(spec.commandLine(), "--metrics-port must be from 0 to 65535, was " + metricsPort);
        }
        return new Settings(batch, prefetch, maxAttempts);
    }

    private Optional<Path> sqliteFile() {
        try {
            return WarehouseDatabase.sqliteFile(db);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private Warehouse open(boolean isFile) {
        try {
            return WarehouseDatabase.open(db);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "refusing to start: " + e.getMessage());
        } catch (InboxStorageException e) {
            throw CommandError.database("--db", WarehouseDatabase.shown(db), isFile, e);
        }
    }

    private static HttpServer bindMetrics(int port) throws IOException {
        try {
            return HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        } catch (BindException e) {
            throw new CommandError(ExitCodes.NETWORK, "--metrics-port " + port + " cannot be bound: "
                    + CommandError.oneLine(e.getMessage()));
        }
    }

    /** The stock as {@code GET /stock} answers it. */
    static String stockJson(StockLevel stock) {
        ObjectNode body = ProtocolV1.JSON.createObjectNode();
        body.put("total", stock.total());
        body.put("receipts", stock.receipts());
        return body.toString();
    }

    private static void sendMetrics(HttpExchange exchange, Warehouse warehouse, ReceiptSource source) throws IOException {
        try (exchange) {
            byte[] text = prometheus(source.counts(), warehouse.stock()).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, text.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(text);
            }
        }
    }

    /**
     * The consumer's counters and the stock in the Prometheus text format, version 0.0.4; the stock
     * gauges are named as {@code serve}'s, so one dashboard reads either receiver.
     */
    static String prometheus(Counts counts, StockLevel stock) {
        StringBuilder text = new StringBuilder();
        text.append("# HELP warehouse_deliveries_total Receipts taken from the broker, by what the broker was told.\n");
        text.append("# TYPE warehouse_deliveries_total counter\n");
        deliveries(text, "applied", counts.applied());
        deliveries(text, "duplicate", counts.duplicates());
        deliveries(text, "dead_lettered", counts.deadLettered());
        deliveries(text, "requeued", counts.requeued());
        metric(text, "warehouse_acks_total", "counter", "Receipts acknowledged to the broker, each after its commit.",
                counts.acked());
        metric(text, "warehouse_applied_effects_total", "counter", "Stock changes committed by this receiver.",
                counts.applied());
        metric(text, "warehouse_stock_total", "gauge", "The committed stock total.", stock.total());
        metric(text, "warehouse_receipts", "gauge", "Distinct shipments received: the inbox's rows.", stock.receipts());
        return text.toString();
    }

    private static void deliveries(StringBuilder text, String outcome, long value) {
        text.append("warehouse_deliveries_total{outcome=\"").append(outcome).append("\"} ").append(value).append('\n');
    }

    private static void metric(StringBuilder text, String name, String type, String help, long value) {
        text.append("# HELP ").append(name).append(' ').append(help).append('\n');
        text.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        text.append(name).append(' ').append(value).append('\n');
    }
}
