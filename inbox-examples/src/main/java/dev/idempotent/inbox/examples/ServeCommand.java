package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.examples.http.AckFault;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Runs the warehouse's HTTP receiver until the process is stopped. */
@Command(name = "serve", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = {"Runs the warehouse's HTTP receiver (protocol v1) until stopped with Ctrl-C or SIGTERM.",
                "It binds the port before it opens the database, so a port in use leaves nothing created."},
        exitCodeListHeading = ExitCodes.HEADING,
        exitCodeList = {" 0:stopped by Ctrl-C or SIGTERM", ExitCodes.USAGE_LINE,
                "  :(--db naming a directory, or a file in a directory that does not exist)", ExitCodes.DATABASE_LINE,
                ExitCodes.NETWORK_LINE, ExitCodes.SOFTWARE_LINE})
final class ServeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--db", required = true, paramLabel = "FILE|URL",
            description = "The warehouse's SQLite file (a path with a / or ending .db, .sqlite or .sqlite3, or"
                    + " jdbc:sqlite:FILE), a PostgreSQL database as postgresql://HOST:PORT/DB?user=NAME"
                    + " (jdbc:postgresql://... too), or a MariaDB database as mariadb://USER@HOST:PORT/DB"
                    + " (jdbc:mariadb://... too); its tables are created if absent.")
    String db;

    @Option(names = "--retention", paramLabel = "DURATION",
            description = "How long inbox rows are kept before a purge may delete them, as " + DurationOption.ACCEPTED
                    + " (default: the library's, 30 days).")
    Duration retention;

    @Option(names = "--purge-every", paramLabel = "DURATION",
            description = "Purge rows older than the retention this often, starting one period after startup,"
                    + " as " + DurationOption.ACCEPTED + " (default: never).")
    Duration purgeEvery;

    @Option(names = "--sender-max-resend-age", paramLabel = "DURATION",
            description = "The age after which the senders stop resending (publish --max-resend-age), as"
                    + " " + DurationOption.ACCEPTED + ";"
                    + " a --retention shorter than it plus the clock-skew margin (10 minutes) is refused.")
    Duration senderMaxResendAge;

    @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "The address to listen on (default ${DEFAULT-VALUE}); any other than loopback needs --token.")
    String bind;

    /** The port publish's examples send to: http://127.0.0.1:8080. */
    static final int DEFAULT_PORT = 8080;

    @Option(names = "--port", paramLabel = "N", defaultValue = "" + DEFAULT_PORT,
            description = "The port (default ${DEFAULT-VALUE}), as in publish --to http://127.0.0.1:8080; 0 for an"
                    + " ephemeral one, printed on start.")
    int port;

    @Option(names = "--token", paramLabel = "T", description = "Require 'Authorization: Bearer T' on every request.")
    String token;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "" + ReceiverSettings.DEFAULT_THREADS,
            description = "Requests handled at once (default ${DEFAULT-VALUE}). On SQLite, concurrent requests are"
                    + " what one group commit can take together; with PostgreSQL or MariaDB each holds a connection of its own.")
    int threads;

    @Option(names = "--drop-ack-rate", paramLabel = "R", defaultValue = "0",
            description = "For experiments: after the commit, close the connection without a response for this fraction"
                    + " of requests (0 to 1).")
    double dropAckRate;

    @Option(names = "--seed", paramLabel = "S", defaultValue = "1", description = "Seeds --drop-ack-rate (default ${DEFAULT-VALUE}).")
    long seed;

    @Override
    public Integer call() throws Exception {
        ReceiverSettings settings = settings();
        if (purgeEvery != null && (purgeEvery.isNegative() || purgeEvery.isZero())) {
            throw new ParameterException(spec.commandLine(), "--purge-every must be positive, was " + purgeEvery);
        }
        Optional<Path> file = sqliteFile();
        if (file.isPresent()) {
            CommandError.requireFileInExistingDirectory(spec.commandLine(), "--db", file.get());
        }
        WarehouseServer.Binding binding = bind(settings);
        Warehouse warehouse;
        WarehouseServer server;
        try {
            warehouse = open(file.isPresent());
            try {
                server = binding.start(warehouse);
            } catch (RuntimeException e) {
                warehouse.close();
                throw e;
            }
        } finally {
            binding.close();
        }
        ScheduledExecutorService purger = purgeEvery == null ? null : startPurging(warehouse);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // Stop taking requests, let running transactions (and a running purge batch) commit,
            // then release the database.
            server.close();
            if (purger != null) {
                stopPurging(purger);
            }
            warehouse.close();
            System.out.println("warehouse stopped");
            System.out.flush();
            stopped.countDown();
        }, "warehouse-shutdown"));
        System.out.println("warehouse listening on " + server.uri() + " (" + warehouse.describe() + ")");
        System.out.flush();
        stopped.await();
        return 0;
    }

    private Optional<Path> sqliteFile() {
        try {
            return WarehouseDatabase.sqliteFile(db);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private WarehouseServer.Binding bind(ReceiverSettings settings) throws IOException {
        try {
            return WarehouseServer.bind(settings);
        } catch (BindException e) {
            InetAddress address = settings.address();
            String reason = CommandError.oneLine(e.getMessage());
            if (isThisMachine(address)) {
                throw new CommandError(ExitCodes.NETWORK, "--port " + port + " on " + address.getHostAddress()
                        + " cannot be bound: " + reason);
            }
            throw new CommandError(ExitCodes.NETWORK, "--bind " + address.getHostAddress()
                    + " is not an address of this machine: " + reason);
        }
    }

    private static boolean isThisMachine(InetAddress address) {
        try {
            return address.isAnyLocalAddress() || address.isLoopbackAddress()
                    || NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            return true;
        }
    }

    private Warehouse open(boolean isFile) {
        try {
            return WarehouseDatabase.open(db, options());
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "refusing to start: " + e.getMessage()
                    + " (--retention, --sender-max-resend-age)");
        } catch (InboxStorageException e) {
            throw CommandError.database("--db", WarehouseDatabase.shown(db), isFile, e);
        }
    }

    private WarehouseOptions options() {
        WarehouseOptions options = WarehouseOptions.defaults();
        if (retention != null) {
            options = options.withRetention(retention);
        }
        if (senderMaxResendAge != null) {
            options = options.withSenderMaxResendAge(senderMaxResendAge);
        }
        return options;
    }

    private ScheduledExecutorService startPurging(Warehouse warehouse) {
        ScheduledExecutorService purger = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "warehouse-purge");
            thread.setDaemon(true);
            return thread;
        });
        warehouse.retention().schedulePurge(purger, purgeEvery);
        return purger;
    }

    private static void stopPurging(ScheduledExecutorService purger) {
        // shutdown() cancels the next runs; a purge batch in progress is a short transaction.
        purger.shutdown();
        try {
            purger.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private ReceiverSettings settings() {
        // Checked here, not only by ReceiverSettings, whose messages name its fields rather than the options.
        if (port < 0 || port > 65_535) {
            throw new ParameterException(spec.commandLine(), "--port must be from 0 to 65535, was " + port);
        }
        if (threads < 1) {
            throw new ParameterException(spec.commandLine(), "--threads must be at least 1, was " + threads);
        }
        if (!(dropAckRate >= 0 && dropAckRate <= 1)) {
            throw new ParameterException(spec.commandLine(), "--drop-ack-rate must be from 0 to 1, was " + dropAckRate);
        }
        if (token != null && token.isBlank()) {
            throw new ParameterException(spec.commandLine(), "--token must not be blank");
        }
        InetAddress address;
        try {
            address = InetAddress.getByName(bind);
        } catch (UnknownHostException e) {
            throw new ParameterException(spec.commandLine(), "--bind " + bind + " is not an address or a host name"
                    + " that resolves; give an address of this machine, such as 127.0.0.1");
        }
        try {
            return new ReceiverSettings(address, port, Optional.ofNullable(token), AckFault.random(dropAckRate, seed),
                    threads);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--bind " + bind + ": " + e.getMessage());
        }
    }
}
