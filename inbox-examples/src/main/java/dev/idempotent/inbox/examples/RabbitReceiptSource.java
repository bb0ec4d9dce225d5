package dev.idempotent.inbox.examples;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import dev.idempotent.inbox.examples.http.Receipt;
import dev.idempotent.inbox.rabbitmq.ConsumerStats;
import dev.idempotent.inbox.rabbitmq.ContentDecoder;
import dev.idempotent.inbox.rabbitmq.Decoded;
import dev.idempotent.inbox.rabbitmq.RabbitInboxConsumer;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * {@code consume --broker rabbitmq}: receipts from a RabbitMQ queue, each message's body the JSON
 * of a {@code POST /receipts} and its {@code message-id} the receipt's id, applied through the
 * warehouse's inbox by a {@link RabbitInboxConsumer} and acked after the commit.
 */
final class RabbitReceiptSource implements ConsumeCommand.ReceiptSource {

    /** The name the broker lists this consumer's connection by. */
    static final String CONNECTION_NAME = "inbox-examples-consume";

    /**
     * The body as protocol v1 reads it. A message-id that is not the body's id is refused: the two
     * would name different business.
     */
    static final ContentDecoder<Receipt> RECEIPTS = delivery -> {
        Receipt receipt = ProtocolV1.parseReceipt(delivery.getBody());
        if (!receipt.id().equals(delivery.getProperties().getMessageId())) {
            throw new IllegalArgumentException("the message-id is not the receipt's id");
        }
        Decoded<Receipt> decoded = Decoded.of(Warehouse.content(receipt.qty()), receipt);
        return receipt.origin().map(decoded::withOriginTime).orElse(decoded);
    };

    private final Connection connection;
    private final RabbitInboxConsumer consumer;
    private final String shown;

    private RabbitReceiptSource(Connection connection, RabbitInboxConsumer consumer, String shown) {
        this.connection = connection;
        this.consumer = consumer;
        this.shown = shown;
    }

    /**
     * Connects to {@code uri} and checks that {@code queue} can be consumed, waiting at most
     * {@code timeout} for the broker; consuming starts with {@link #start}. Nothing else is created.
     *
     * @throws CommandError if the broker cannot be reached or the queue cannot be consumed
     * @throws IllegalArgumentException for a URI that is not an amqp:// or amqps:// one
     */
    static Connection connect(String uri, String queue, Duration timeout) {
        ConnectionFactory factory = new ConnectionFactory();
        try {
            factory.setUri(uri);
        } catch (URISyntaxException | GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException("--uri must be amqp://USER:PASSWORD@HOST:PORT/VHOST: " + e.getMessage());
        }
        factory.setAutomaticRecoveryEnabled(true);
        factory.setNetworkRecoveryInterval(1000);
        factory.setConnectionTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        Connection connection;
        try {
            connection = factory.newConnection(CONNECTION_NAME);
        } catch (IOException | TimeoutException e) {
            throw new CommandError(ExitCodes.NETWORK, "--uri " + shown(uri) + " cannot be reached: "
                    + CommandError.oneLine(e.getMessage() != null ? e.getMessage() : "no answer within " + timeout));
        }
        // A channel of its own: a failed passive declare closes the channel it ran on.
        try (Channel channel = connection.createChannel()) {
            channel.queueDeclarePassive(queue);
        } catch (IOException | TimeoutException e) {
            closeQuietly(connection);
            throw queueError(uri, queue, e);
        } catch (RuntimeException e) {
            closeQuietly(connection);
            throw e;
        }
        return connection;
    }

    /**
     * Starts consuming {@code queue} on {@code connection}, from {@link #connect}, into
     * {@code warehouse}. On failure the connection is closed.
     *
     * @throws CommandError if the queue cannot be consumed
     */
    static RabbitReceiptSource start(Connection connection, String uri, String queue, Warehouse warehouse,
            ConsumeCommand.Settings settings) {
        String shown = shown(uri) + " queue " + queue;
        try {
            RabbitInboxConsumer consumer = RabbitInboxConsumer
                    .builder(warehouse.inbox(), queue, RECEIPTS, (tx, id, receipt) -> Warehouse.addToStock(tx, receipt.qty()))
                    .prefetch(settings.prefetch())
                    .batchSize(settings.batchSize())
                    .maxEffectAttempts(settings.maxAttempts())
                    .start(connection);
            return new RabbitReceiptSource(connection, consumer, shown);
        } catch (IOException e) {
            closeQuietly(connection);
            throw queueError(uri, queue, e);
        } catch (RuntimeException e) {
            closeQuietly(connection);
            throw e;
        }
    }

    @Override
    public String describe() {
        return "RabbitMQ " + shown;
    }

    @Override
    public ConsumeCommand.Counts counts() {
        ConsumerStats stats = consumer.stats();
        return new ConsumeCommand.Counts(stats.applied(), stats.duplicates(), stats.acked(), stats.deadLettered(),
                stats.requeued());
    }

    @Override
    public void close() {
        consumer.close();
        closeQuietly(connection);
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (IOException | RuntimeException e) {
            // Already closed, by the broker or by a lost network; nothing is left to release.
        }
    }

    private static CommandError queueError(String uri, String queue, Exception e) {
        return new CommandError(ExitCodes.NETWORK, "--queue " + queue + " cannot be consumed on " + shown(uri)
                + " (it must exist): " + CommandError.oneLine(reason(e)));
    }

    /** The broker's own words (NOT_FOUND - no queue 'x' in vhost '/'), without the protocol dump around them. */
    private static String reason(Exception e) {
        Throwable cause = e.getCause() != null ? e.getCause() : e;
        if (cause instanceof ShutdownSignalException signal && signal.getReason() instanceof AMQP.Channel.Close close) {
            return close.getReplyText();
        }
        return String.valueOf(cause.getMessage());
    }

    /** The URI without its user and password. */
    private static String shown(String uri) {
        try {
            URI parsed = new URI(uri);
            return parsed.getScheme() + "://" + parsed.getHost() + (parsed.getPort() < 0 ? "" : ":" + parsed.getPort())
                    + (parsed.getPath() == null ? "" : parsed.getPath());
        } catch (URISyntaxException e) {
            return "(unreadable URI)";
        }
    }
}
