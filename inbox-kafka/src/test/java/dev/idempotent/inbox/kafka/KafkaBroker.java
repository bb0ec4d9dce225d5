package dev.idempotent.inbox.kafka;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A real single-node KRaft broker (broker and controller in one) in a child JVM, run from the
 * {@code kafka_2.13} jar on this JVM's class path: a test can kill it, stop it and start it again
 * on the same log directory and ports, which an in-process broker cannot offer. One per test class,
 * started once; its topics get random names.
 */
public final class KafkaBroker implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final Path dir;
    private final int port;
    private final int controllerPort;
    private volatile Process process;

    private KafkaBroker(Path dir, int port, int controllerPort) {
        this.dir = dir;
        this.port = port;
        this.controllerPort = controllerPort;
    }

    /**
     * Formats a new log directory under {@code dir} and starts the broker on free loopback ports.
     *
     * @param dir a directory of the test's own
     * @return the running broker, ready for clients
     */
    public static KafkaBroker start(Path dir) {
        KafkaBroker broker = new KafkaBroker(dir, freePort(), freePort());
        // A JVM that exits without closing the broker (a benchmark stopped with Ctrl-C) takes it along.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            Process process = broker.process;
            if (process != null) {
                process.destroyForcibly();
            }
        }, "kafka-broker-stop"));
        broker.format();
        broker.startProcess();
        return broker;
    }

    /** {@return the bootstrap address, {@code 127.0.0.1:port}} */
    public String bootstrap() {
        return "127.0.0.1:" + port;
    }

    /** Kills the broker's JVM at once, as a power cut would; the log directory stays. */
    public void kill() {
        process.destroyForcibly();
        waitFor(process);
    }

    /** Starts the broker again on the same log directory and ports, after {@link #kill()}. */
    public void restart() {
        startProcess();
    }

    /**
     * Creates {@code topic} with {@code partitions} partitions.
     *
     * @param topic the name
     * @param partitions how many partitions
     */
    public void createTopic(String topic, int partitions) {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("creating topic " + topic + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@return an admin client for this broker; close it} */
    public Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000));
    }

    /** {@return a producer that waits for every write to be acknowledged; close it} */
    public KafkaProducer<String, byte[]> producer() {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 5),
                new StringSerializer(), new ByteArraySerializer());
    }

    /**
     * Sends {@code records} (key, UTF-8 value) to partition {@code partition} of {@code topic}, in
     * order, and waits until all are acknowledged.
     *
     * @param topic the topic
     * @param partition the partition
     * @param records key and value pairs
     */
    public void send(String topic, int partition, List<Map.Entry<String, String>> records) {
        try (KafkaProducer<String, byte[]> producer = producer()) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (Map.Entry<String, String> record : records) {
                sent.add(producer.send(new ProducerRecord<>(topic, partition, record.getKey(),
                        record.getValue().getBytes(StandardCharsets.UTF_8))));
            }
            for (java.util.concurrent.Future<?> future : sent) {
                future.get(30, TimeUnit.SECONDS);
            }
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("sending to " + topic + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        if (process != null && process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    waitFor(process);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    private Path properties() {
        return dir.resolve("server.properties");
    }

    private void format() {
        Properties server = new Properties();
        server.setProperty("process.roles", "broker,controller");
        server.setProperty("node.id", "1");
        server.setProperty("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
        server.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        server.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        server.setProperty("controller.listener.names", "CONTROLLER");
        server.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        server.setProperty("inter.broker.listener.name", "PLAINTEXT");
        server.setProperty("log.dirs", dir.resolve("logs").toString());
        server.setProperty("offsets.topic.replication.factor", "1");
        server.setProperty("offsets.topic.num.partitions", "1");
        server.setProperty("transaction.state.log.replication.factor", "1");
        server.setProperty("transaction.state.log.min.isr", "1");
        server.setProperty("group.initial.rebalance.delay.ms", "0");
        // A killed consumer's partitions move to the survivors after its session timeout; tests use
        // short ones, which the broker must allow.
        server.setProperty("group.min.session.timeout.ms", "1000");
        server.setProperty("auto.create.topics.enable", "false");
        try {
            Files.createDirectories(dir);
            try (var out = Files.newBufferedWriter(properties())) {
                server.store(out, "single-node KRaft test broker");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Process formatting = java(List.of("kafka.tools.StorageTool", "format", "--standalone",
                "-t", Uuid.randomUuid().toString(), "-c", properties().toString()), "format.log");
        int exit = waitFor(formatting);
        if (exit != 0) {
            throw new IllegalStateException("formatting the broker's storage failed (exit " + exit + "): " + log("format.log"));
        }
    }

    private void startProcess() {
        process = java(List.of("kafka.Kafka", properties().toString()), "broker.log");
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the broker exited with " + process.exitValue() + ": " + log("broker.log"));
            }
            if (ready()) {
                return;
            }
            try {
                process.waitFor(200, TimeUnit.MILLISECONDS); // returns early if it dies
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        process.destroyForcibly();
        throw new IllegalStateException("the broker did not answer within " + START_TIMEOUT + ": " + log("broker.log"));
    }

    /** The port accepts connections and the broker lists itself as a cluster node. */
    private boolean ready() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
        } catch (IOException e) {
            return false;
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 4_000))) {
            return !admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty();
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private Process java(List<String> arguments, String logName) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xms128m");
        command.add("-Xmx512m");
        command.add("-XX:+UseSerialGC");
        command.add("-XX:TieredStopAtLevel=1");
        String logging = System.getProperty("java.util.logging.config.file");
        if (logging != null) {
            command.add("-Djava.util.logging.config.file=" + logging);
        }
        command.add("-cp");
        command.add(classPath());
        command.addAll(arguments);
        try {
            return new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve(logName).toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("starting a JVM for the broker failed", e);
        }
    }

    private static String classPath() {
        return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(entry -> Path.of(entry).toAbsolutePath().toString())
                .collect(Collectors.joining(File.pathSeparator));
    }

    private String log(String name) {
        try {
            List<String> lines = Files.readAllLines(dir.resolve(name));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static int waitFor(Process process) {
        try {
            return process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
