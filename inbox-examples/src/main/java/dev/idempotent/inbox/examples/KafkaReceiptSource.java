package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import dev.idempotent.inbox.examples.http.Receipt;
import dev.idempotent.inbox.kafka.KafkaInboxConsumer;
import dev.idempotent.inbox.kafka.KafkaInboxListener;
import dev.idempotent.inbox.kafka.OffsetStorage;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.jdbi.v3.core.Handle;

/**
 * {@code consume --broker kafka}: receipts from a Kafka topic, each record's value the JSON body of
 * protocol v1 and its key the receipt's id, applied a partition batch at a time with
 * {@link KafkaInboxConsumer}. The group's positions are kept in the warehouse's database, in each
 * batch's transaction, so the database alone decides what was consumed.
 */
final class KafkaReceiptSource implements ConsumeCommand.ReceiptSource {

    private final KafkaInboxConsumer<Handle> consumer;
    private final Thread thread;
    private final Warehouse warehouse;
    private final String shown;
    private final LongAdder refused;

    private KafkaReceiptSource(KafkaInboxConsumer<Handle> consumer, Warehouse warehouse, String shown,
            LongAdder refused) {
        this.consumer = consumer;
        this.warehouse = warehouse;
        this.shown = shown;
        this.refused = refused;
        this.thread = new Thread(consumer::run, "consume-kafka");
    }

    /**
     * Returns once a broker of {@code bootstrap} has answered, waiting at most {@code timeout}: the
     * consumer itself would retry for ever, logging each attempt, where the command must say once
     * that the broker is not there. Creates nothing.
     *
     * @throws CommandError if no broker answered in time
     * @throws IllegalArgumentException for bootstrap servers the client cannot read
     */
    static void checkReachable(String bootstrap, Duration timeout) {
        int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        Map<String, Object> config = Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.CLIENT_ID_CONFIG, "inbox-examples-consume-check",
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, millis,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, millis);
        Admin admin;
        try {
            admin = Admin.create(config);
        } catch (KafkaException e) {
            if (String.valueOf(e.getMessage()).startsWith("No resolvable bootstrap urls")) {
                throw new CommandError(ExitCodes.NETWORK, "--bootstrap " + bootstrap + " cannot be reached: no host"
                        + " named in it resolves");
            }
            throw new IllegalArgumentException("--bootstrap " + bootstrap
                    + " cannot be used (give HOST:PORT[,HOST:PORT...]): " + CommandError.oneLine(rootMessage(e)));
        }
        try {
            admin.describeCluster(new DescribeClusterOptions().timeoutMs(millis)).clusterId()
                    .get(millis + 1000L, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            String reason = cause instanceof org.apache.kafka.common.errors.TimeoutException
                    || cause instanceof java.util.concurrent.TimeoutException
                    ? "no broker answered within " + timeout.toSeconds() + " s (--connect-timeout)"
                    : CommandError.oneLine(rootMessage(cause));
            throw new CommandError(ExitCodes.NETWORK, "--bootstrap " + bootstrap + " cannot be reached: " + reason);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommandError(ExitCodes.NETWORK, "--bootstrap " + bootstrap + ": interrupted while connecting");
        } finally {
            admin.close(Duration.ZERO);
        }
    }

    private static String rootMessage(Throwable failure) {
        String message = failure.getMessage();
        for (Throwable t = failure.getCause(); t != null; t = t.getCause()) {
            if (t.getMessage() != null) {
                message = t.getMessage();
            }
        }
        return String.valueOf(message);
    }

    /**
     * Starts consuming {@code topic} as a member of {@code group} into {@code warehouse}, on a thread
     * of its own; connecting to the broker happens there.
     */
    static KafkaReceiptSource start(String bootstrap, String topic, String group, Warehouse warehouse,
            ConsumeCommand.Settings settings) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, settings.batchSize(),
                ConsumerConfig.CLIENT_ID_CONFIG, "inbox-examples-consume");
        LongAdder refused = new LongAdder();
        KafkaInboxConsumer<Handle> consumer = KafkaInboxConsumer.builder(warehouse.inbox(), config,
                        (Handle tx, ConsumerRecord<String, byte[]> record) ->
                                Warehouse.addToStock(tx, ProtocolV1.parseReceipt(record.value()).qty()))
                .topics(topic)
                .offsetStorage(OffsetStorage.DATABASE)
                .reader(KafkaReceiptSource::message)
                .maxEffectAttempts(settings.maxAttempts())
                // Counted inside the batch's transaction: a batch that rolls back and is retried
                // counts its refusals again, which a counter of this example can bear.
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record, Outcome.Conflict<?> conflict) {
                        refused.increment();
                    }

                    @Override
                    public void onRejected(Handle tx, ConsumerRecord<String, byte[]> record, Exception failure) {
                        refused.increment();
                    }
                })
                .build();
        KafkaReceiptSource source = new KafkaReceiptSource(consumer, warehouse,
                "Kafka " + bootstrap + " topic " + topic + " group " + group, refused);
        source.thread.start();
        return source;
    }

    /** The same id and content as {@code POST /receipts} gives, so HTTP and Kafka deliveries dedupe together. */
    private static Message message(ConsumerRecord<String, byte[]> record) {
        if (record.value() == null) {
            throw new IllegalArgumentException("the record has no value; it must be a receipt's JSON body");
        }
        Receipt receipt = ProtocolV1.parseReceipt(record.value());
        if (record.key() != null && !record.key().equals(receipt.id())) {
            throw new IllegalArgumentException("the record's key is not the receipt's id");
        }
        Message message = Message.of(receipt.id(), Warehouse.content(receipt.qty()));
        return receipt.origin().map(message::withOriginTime).orElse(message);
    }

    @Override
    public String describe() {
        return shown;
    }

    /**
     * Conflicts and rejected records count as dead-lettered (Kafka keeps no dead letter of its own:
     * they are reported and skipped); every settled record's position is committed with its batch,
     * so acked is their sum. Kafka requeues nothing: a record to retry is sought back to.
     */
    @Override
    public ConsumeCommand.Counts counts() {
        long applied = warehouse.stats().applied();
        long duplicates = warehouse.stats().duplicates();
        long deadLettered = refused.sum();
        return new ConsumeCommand.Counts(applied, duplicates, applied + duplicates + deadLettered, deadLettered, 0);
    }

    @Override
    public void close() {
        consumer.close();
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
