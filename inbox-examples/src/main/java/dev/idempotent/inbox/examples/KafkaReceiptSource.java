package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import dev.idempotent.inbox.examples.http.Receipt;
import dev.idempotent.inbox.kafka.KafkaInboxConsumer;
import dev.idempotent.inbox.kafka.KafkaInboxListener;
import dev.idempotent.inbox.kafka.OffsetStorage;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.jdbi.v3.core.Handle;
import picocli.CommandLine.Option;

/**
 * {@code consume --broker kafka}: receipts from a Kafka topic, each record's value the JSON body of
 * protocol v1 and its key the receipt's id, applied a partition batch at a time with
 * {@link KafkaInboxConsumer}. The position is kept in the warehouse's database, in the batch's
 * transaction, so the database alone decides what was consumed.
 */
final class KafkaReceiptSource implements ReceiptSource {

    /** The options {@code consume} takes for Kafka. */
    static final class Options {

        @Option(names = "--bootstrap", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:9092",
                description = "Kafka's bootstrap servers (default ${DEFAULT-VALUE}).")
        String bootstrap;

        @Option(names = "--topic", paramLabel = "NAME", defaultValue = "receipts",
                description = "The topic to consume (default ${DEFAULT-VALUE}).")
        String topic;

        @Option(names = "--group", paramLabel = "NAME", defaultValue = "warehouse",
                description = "The consumer group (default ${DEFAULT-VALUE}); its positions are kept in --db.")
        String group;
    }

    private final KafkaInboxConsumer<Handle> consumer;

    private KafkaReceiptSource(KafkaInboxConsumer<Handle> consumer) {
        this.consumer = consumer;
    }

    static KafkaReceiptSource open(Options options, Warehouse warehouse, ConsumeCounters counters) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, options.bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, options.group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.CLIENT_ID_CONFIG, "warehouse-consume");
        return new KafkaReceiptSource(KafkaInboxConsumer.builder(warehouse.inbox(), config,
                        (Handle tx, ConsumerRecord<String, byte[]> record) ->
                                InboxWarehouse.addStock(tx, ProtocolV1.receipt(record.value()).qty()))
                .topics(options.topic)
                .offsetStorage(OffsetStorage.DATABASE)
                .reader(KafkaReceiptSource::message)
                .listener(new KafkaInboxListener<>() {
                    // Counted inside the batch's transaction: a batch that rolls back and is retried
                    // counts its conflicts again, which a counter of this example can bear.
                    @Override
                    public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record, Outcome.Conflict<?> conflict) {
                        counters.conflict();
                    }

                    @Override
                    public void onRejected(Handle tx, ConsumerRecord<String, byte[]> record, Exception failure) {
                        counters.reject();
                    }

                    @Override
                    public void onCommitted(TopicPartition partition, long nextOffset) {
                        counters.settled(Instant.now());
                    }
                })
                .build());
    }

    /** The same id and content as {@code POST /receipts} would give, so HTTP and Kafka deliveries dedupe together. */
    private static Message message(ConsumerRecord<String, byte[]> record) {
        if (record.value() == null) {
            throw new IllegalArgumentException("the record has no value; it must be a receipt's JSON body");
        }
        Receipt receipt = ProtocolV1.receipt(record.value());
        if (record.key() != null && !record.key().equals(receipt.id())) {
            throw new IllegalArgumentException("the record's key is not the receipt's id");
        }
        Message message = Message.of(receipt.id(), Content.of(receipt.qty()));
        return receipt.origin().map(message::withOriginTime).orElse(message);
    }

    @Override
    public void run() {
        consumer.run();
    }

    @Override
    public void close() {
        consumer.close();
    }
}
