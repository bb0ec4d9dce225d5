package dev.idempotent.inbox.examples;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A queue of one test's own on the test broker (127.0.0.1:5672, guest/guest), with a dead-letter
 * exchange and queue; {@link #close} deletes all three.
 */
final class RabbitQueue implements AutoCloseable {

    static final String URI = "amqp://guest:guest@" + System.getenv().getOrDefault("INBOX_RABBIT_HOST", "127.0.0.1")
            + ":" + System.getenv().getOrDefault("INBOX_RABBIT_PORT", "5672");

    final String name;
    final String deadLetterQueue;
    private final String deadLetterExchange;
    private final Connection connection;
    private final Channel channel;

    RabbitQueue() throws IOException, TimeoutException {
        try {
            name = "receipts-test-" + UUID.randomUUID().toString().substring(0, 8);
            deadLetterExchange = name + ".dlx";
            deadLetterQueue = name + ".dead";
            ConnectionFactory factory = new ConnectionFactory();
            factory.setUri(URI);
            connection = factory.newConnection("inbox-examples-test");
            channel = connection.createChannel();
            channel.exchangeDeclare(deadLetterExchange, "fanout");
            channel.queueDeclare(deadLetterQueue, false, false, false, null);
            channel.queueBind(deadLetterQueue, deadLetterExchange, "");
            channel.queueDeclare(name, false, false, false, Map.of("x-dead-letter-exchange", deadLetterExchange));
        } catch (java.net.URISyntaxException | java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Publishes a receipt as the warehouse's senders do: the JSON body, the id as the message id. */
    void publish(String id, int qty) throws IOException {
        String body = "{\"id\":\"" + id + "\",\"qty\":" + qty + "}";
        channel.basicPublish("", name, new AMQP.BasicProperties.Builder().messageId(id).contentType("application/json")
                .build(), body.getBytes(StandardCharsets.UTF_8));
    }

    /** Messages in the dead-letter queue, ready. */
    long deadLetters() throws IOException {
        return channel.queueDeclarePassive(deadLetterQueue).getMessageCount();
    }

    /** Takes the dead letters and returns their bodies. */
    List<String> takeDeadLetters() throws IOException {
        List<String> bodies = new ArrayList<>();
        GetResponse response;
        while ((response = channel.basicGet(deadLetterQueue, true)) != null) {
            bodies.add(new String(response.getBody(), StandardCharsets.UTF_8));
        }
        return bodies;
    }

    /** Messages ready in the queue. */
    long ready() throws IOException {
        return channel.queueDeclarePassive(name).getMessageCount();
    }

    /**
     * Messages in the queue, ready and unacked, as the broker counts them; an unacked delivery
     * is not visible to a client, so this asks rabbitmqctl.
     */
    long readyAndUnacked() throws IOException, InterruptedException {
        Process process = new ProcessBuilder("rabbitmqctl", "-q", "list_queues", "name", "messages")
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException("rabbitmqctl list_queues failed: " + output);
        }
        for (String line : output.split("\n")) {
            String[] fields = line.strip().split("\t");
            if (fields.length == 2 && fields[0].equals(name)) {
                return Long.parseLong(fields[1]);
            }
        }
        throw new IllegalStateException("rabbitmqctl does not list " + name + ": " + output);
    }

    @Override
    public void close() throws IOException, TimeoutException {
        channel.queueDelete(name);
        channel.queueDelete(deadLetterQueue);
        channel.exchangeDelete(deadLetterExchange);
        connection.close();
    }
}
