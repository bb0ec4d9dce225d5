package dev.idempotent.inbox.examples;

import com.sun.net.httpserver.HttpServer;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Consumes receipts from a broker into the warehouse until stopped; the broker's own part lives in
 * its {@link ReceiptSource}.
 */
@Command(name = "consume", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = {"Consumes receipts (the JSON body of protocol v1, the id also as the record key) from a broker"
                + " into the warehouse, until stopped with Ctrl-C or SIGTERM (or --idle-exit).",
                "On exit it prints the stock as GET /stock gives it."},
        exitCodeListHeading = ExitCodes.HEADING,
        exitCodeList = {" 0:stopped", ExitCodes.USAGE_LINE, ExitCodes.DATABASE_LINE, ExitCodes.NETWORK_LINE,
                ExitCodes.SOFTWARE_LINE})
final class ConsumeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--broker", required = true, paramLabel = "NAME", description = "The broker: kafka.")
    String broker;

    @Option(names = "--db", required = true, paramLabel = "FILE|URL",
            description = "The warehouse's SQLite file, or a PostgreSQL or MariaDB URL as serve takes them;"
                    + " its tables are created if absent.")
    String db;

    @Option(names = "--metrics-port", paramLabel = "N",
            description = "Serve the counters in the Prometheus text format on 127.0.0.1:N" + ProtocolV1.METRICS + ".")
    Integer metricsPort;

    @Option(names = "--idle-exit", paramLabel = "DURATION",
            description = "Stop once nothing was consumed for this long after the first receipt, as ISO-8601 (PT5S).")
    Duration idleExit;

    @Mixin
    KafkaReceiptSource.Options kafka;

    @Override
    public Integer call() throws Exception {
        if (!broker.equals("kafka")) {
            throw new ParameterException(spec.commandLine(), "--broker " + broker + " is not supported; use kafka");
        }
        if (idleExit != null && (idleExit.isNegative() || idleExit.isZero())) {
            throw new ParameterException(spec.commandLine(), "--idle-exit must be positive, was " + idleExit);
        }
        Optional<Path> file = sqliteFile();
        if (file.isPresent()) {
            CommandError.requireFileInExistingDirectory(spec.commandLine(), "--db", file.get());
        }
        Warehouse warehouse = open(file.isPresent());
        ConsumeCounters counters = new ConsumeCounters();
        HttpServer metrics = null;
        try {
            metrics = metricsPort == null ? null : serveMetrics(warehouse, counters);
            ReceiptSource source = KafkaReceiptSource.open(kafka, warehouse, counters);
            consumeUntilStopped(source, counters);
            Map<String, Object> stock = new LinkedHashMap<>();
            stock.put("total", warehouse.stock().total());
            stock.put("receipts", warehouse.stock().receipts());
            System.out.println(ProtocolV1.JSON.writeValueAsString(stock));
            System.out.println("consumed: applied " + warehouse.stats().applied() + ", duplicates "
                    + warehouse.stats().duplicates() + ", conflicts " + counters.conflicts()
                    + ", rejected " + counters.rejected());
            System.out.flush();
            return 0;
        } finally {
            if (metrics != null) {
                metrics.stop(0);
            }
            warehouse.close();
        }
    }

    /** Runs {@code source} on a thread of its own until SIGTERM, or until idle for {@code --idle-exit}. */
    private void consumeUntilStopped(ReceiptSource source, ConsumeCounters counters) throws Exception {
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        Thread consuming = new Thread(() -> {
            try {
                source.run();
            } catch (RuntimeException e) {
                failure.set(e);
            } finally {
                ended.countDown();
            }
        }, "consume");
        CountDownLatch reported = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            source.close();
            try {
                reported.await(30, TimeUnit.SECONDS); // lets call() print the stock before the JVM halts
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "consume-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        consuming.start();
        try {
            while (!ended.await(100, TimeUnit.MILLISECONDS)) {
                Instant last = counters.lastSettled();
                if (idleExit != null && last != null && Duration.between(last, Instant.now()).compareTo(idleExit) > 0) {
                    source.close();
                }
            }
            if (failure.get() != null) {
                throw failure.get();
            }
        } finally {
            source.close();
            reported.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running: it waits for the report above
            }
        }
    }

    private HttpServer serveMetrics(Warehouse warehouse, ConsumeCounters counters) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), metricsPort), 0);
            server.createContext(ProtocolV1.METRICS, exchange -> {
                byte[] body = counters.prometheus(warehouse).getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.start();
            return server;
        } catch (IOException e) {
            throw new CommandError(ExitCodes.NETWORK, "--metrics-port " + metricsPort + " cannot be bound: "
                    + CommandError.oneLine(String.valueOf(e.getMessage())));
        }
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
}
