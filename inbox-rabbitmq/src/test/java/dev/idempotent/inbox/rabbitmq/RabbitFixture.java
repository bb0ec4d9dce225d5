package dev.idempotent.inbox.rabbitmq;

import static org.junit.jupiter.api.Assertions.fail;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * The test broker (127.0.0.1:5672, guest/guest, or INBOX_RABBIT_HOST/INBOX_RABBIT_PORT): a queue of
 * this test's own, with a dead-letter exchange and queue, all deleted by {@link #close}.
 */
final class RabbitFixture implements AutoCloseable {

    static final String HOST = System.getenv().getOrDefault("INBOX_RABBIT_HOST", "127.0.0.1");
    static final int PORT = Integer.parseInt(System.getenv().getOrDefault("INBOX_RABBIT_PORT", "5672"));

    final String queue;
    final String deadLetterExchange;
    final String deadLetterQueue;
    /** The client-provided name of {@link #connection}, by which the broker lists it. */
    final String connectionName;
    /** The connection a consumer under test uses; automatic recovery on, retrying every 100 ms. */
    final Connection connection;
    private final Connection admin;
    private final Channel channel;
    private final boolean quorum;
    private final Map<String, Object> arguments = new HashMap<>();

    RabbitFixture(boolean quorum) throws IOException, TimeoutException {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        queue = "inbox-test-" + suffix;
        deadLetterExchange = queue + ".dlx";
        deadLetterQueue = queue + ".dead";
        connectionName = "inbox-test-consumer-" + suffix;
        ConnectionFactory factory = factory();
        admin = factory.newConnection("inbox-test-admin-" + suffix);
        channel = admin.createChannel();
        channel.exchangeDeclare(deadLetterExchange, "fanout", false, false, null);
        channel.queueDeclare(deadLetterQueue, false, false, false, null);
        channel.queueBind(deadLetterQueue, deadLetterExchange, "");
        this.quorum = quorum;
        arguments.put("x-dead-letter-exchange", deadLetterExchange);
        if (quorum) {
            arguments.put("x-queue-type", "quorum");
        }
        declareQueue();
        connection = factory.newConnection(connectionName);
    }

    /** Declares the test's queue, as the constructor did; again after {@link #deleteQueue}. */
    void declareQueue() throws IOException {
        // Quorum queues are always durable.
        channel.queueDeclare(queue, quorum, false, false, arguments);
    }

    /** Deletes the test's queue, as an operator would; the broker cancels its consumers. */
    void deleteQueue() throws IOException {
        channel.queueDelete(queue);
    }

    static ConnectionFactory factory() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(HOST);
        factory.setPort(PORT);
        factory.setUsername("guest");
        factory.setPassword("guest");
        factory.setAutomaticRecoveryEnabled(true);
        factory.setNetworkRecoveryInterval(100);
        return factory;
    }

    /** Publishes {@code body} with {@code id} as its message id (none when {@code null}). */
    void publish(String id, String body) throws IOException {
        publish(new AMQP.BasicProperties.Builder().messageId(id).build(), body);
    }

    void publish(AMQP.BasicProperties properties, String body) throws IOException {
        channel.basicPublish("", queue, properties, body.getBytes(StandardCharsets.UTF_8));
    }

    /** Messages ready in the queue; unacked ones are not counted. */
    long ready() throws IOException {
        return channel.queueDeclarePassive(queue).getMessageCount();
    }

    /** Takes every message from the dead-letter queue and returns their message ids, in order. */
    List<String> takeDeadLetters() throws IOException {
        List<String> ids = new ArrayList<>();
        GetResponse response;
        while ((response = channel.basicGet(deadLetterQueue, true)) != null) {
            ids.add(response.getProps().getMessageId());
        }
        return ids;
    }

    /** Closes the consumer's connection from the broker's side, as an operator or a failover would. */
    void closeConnectionFromServer() throws IOException, InterruptedException {
        String pid = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (pid == null) {
            // The client sends its connection name among its client properties.
            for (String line : rabbitmqctl("list_connections", "pid", "client_properties")) {
                String[] fields = line.split("\t", 2);
                if (fields.length == 2 && fields[1].contains("\"" + connectionName + "\"")) {
                    pid = fields[0];
                }
            }
            if (pid == null && System.nanoTime() > deadline) {
                fail("the broker does not list the connection " + connectionName);
            }
        }
        rabbitmqctl("close_connection", pid, "closed by the test");
    }

    /**
     * Makes the broker close the channel that consumes the test's queue with a channel error, as it
     * does when a delivery stays unacked past its {@code consumer_timeout}: the channel is handed an
     * ack of a delivery tag it never sent, which it refuses with PRECONDITION_FAILED. The connection
     * and every other channel stay open.
     */
    void failConsumerChannel() throws IOException, InterruptedException {
        String pid = null;
        for (String line : rabbitmqctl("list_consumers", "queue_name", "channel_pid")) {
            String[] fields = line.split("\t");
            if (fields.length == 2 && fields[0].equals(queue)) {
                pid = fields[1];
            }
        }
        if (pid == null) {
            fail("no consumer on " + queue);
        }
        rabbitmqctl("eval", "gen_server2:cast(rabbit_misc:string_to_pid(\"" + pid + "\"),"
                + " {method, {'basic.ack', 999999999, false}, none, noflow}).");
    }

    static List<String> rabbitmqctl(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("rabbitmqctl");
        command.add("-q");
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            fail("rabbitmqctl " + String.join(" ", args) + " failed: " + output);
        }
        List<String> lines = new ArrayList<>();
        for (String line : output.split("\n")) {
            if (!line.isBlank()) {
                lines.add(line.strip());
            }
        }
        return lines;
    }

    /** Polls {@code condition} until it holds; fails naming {@code what} after 30 seconds. */
    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting until " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
    }

    @Override
    public void close() throws IOException, TimeoutException {
        try {
            connection.close();
        } catch (IOException | RuntimeException ignored) {
            // Already closed by the test, or by the broker.
        }
        channel.queueDelete(queue);
        channel.queueDelete(deadLetterQueue);
        channel.exchangeDelete(deadLetterExchange);
        admin.close();
    }
}
