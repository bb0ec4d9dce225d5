package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.examples.http.AckFault;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** Runs the warehouse's HTTP receiver until the process is stopped. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Runs the warehouse's HTTP receiver (protocol v1) until stopped with Ctrl-C or SIGTERM.")
final class ServeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--db", required = true, paramLabel = "FILE", description = "The warehouse's SQLite file, created if absent.")
    String db;

    @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "The address to listen on (default ${DEFAULT-VALUE}); any other than loopback needs --token.")
    String bind;

    @Option(names = "--port", paramLabel = "N", defaultValue = "0", description = "The port (default: an ephemeral one).")
    int port;

    @Option(names = "--token", paramLabel = "T", description = "Require 'Authorization: Bearer T' on every request.")
    String token;

    @Option(names = "--drop-ack-rate", paramLabel = "R", defaultValue = "0",
            description = "For experiments: after the commit, close the connection without a response for this fraction"
                    + " of requests (0 to 1).")
    double dropAckRate;

    @Option(names = "--seed", paramLabel = "S", defaultValue = "1", description = "Seeds --drop-ack-rate (default ${DEFAULT-VALUE}).")
    long seed;

    @Override
    public Integer call() throws Exception {
        ReceiverSettings settings = settings();
        Warehouse warehouse;
        try {
            warehouse = WarehouseDatabase.open(db);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        WarehouseServer server;
        try {
            server = WarehouseServer.start(warehouse, settings);
        } catch (Exception e) {
            warehouse.close();
            throw e;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // Stop taking requests, let running transactions commit, then release the file.
            server.close();
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

    private ReceiverSettings settings() {
        try {
            return new ReceiverSettings(InetAddress.getByName(bind), port, Optional.ofNullable(token),
                    AckFault.random(dropAckRate, seed), ReceiverSettings.loopback().threads());
        } catch (IllegalArgumentException | UnknownHostException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
