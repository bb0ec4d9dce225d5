package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.kafka.KafkaBroker;
import dev.idempotent.inbox.kafka.KafkaInboxConsumer;
import dev.idempotent.inbox.kafka.KafkaInboxListener;
import dev.idempotent.inbox.kafka.OffsetStorage;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * Messages per second through {@link KafkaInboxConsumer} against a plain Kafka consumer with
 * auto-commit that writes the same stock row in one transaction per poll, on the same broker, the
 * same SQLite file and the same pre-filled topic, in the same run, alternating. Each trial consumes
 * the whole topic with a group of its own.
 *
 * <p>Arguments (all optional): {@code rounds} (default 3), then the record counts at batch 1 and at
 * batch 100 (defaults 2000 and 20000). {@code -Dinbox.bench.kafka.dbDir=DIR} puts the SQLite files
 * under {@code DIR} (default: the JVM's temp directory, on disk).
 */
public final class KafkaConsumerThroughput {

    private KafkaConsumerThroughput() {}

    /**
     * Runs the paired trials and prints one line per trial and a summary per batch size.
     *
     * @param args rounds, records at batch 1, records at batch 100
     * @throws Exception if a trial fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int[] counts = {args.length > 1 ? Integer.parseInt(args[1]) : 2_000, args.length > 2 ? Integer.parseInt(args[2]) : 20_000};
        int[] batches = {1, 100};
        Path dir = Files.createTempDirectory("kafka-throughput");
        // -Dinbox.bench.kafka.dbDir=/dev/shm puts the SQLite files on tmpfs, taking the disk's sync out.
        Path dbParent = Path.of(System.getProperty("inbox.bench.kafka.dbDir", dir.toString()));
        try (KafkaBroker broker = KafkaBroker.start(dir.resolve("broker"))) {
            for (int b = 0; b < batches.length; b++) {
                int batch = batches[b];
                int records = counts[b];
                String topic = "receipts-" + UUID.randomUUID();
                broker.createTopic(topic, 1);
                fill(broker, topic, records);
                List<Double> plain = new ArrayList<>();
                List<Double> kafka = new ArrayList<>();
                List<Double> database = new ArrayList<>();
                for (int round = 1; round <= rounds; round++) {
                    Path db = Files.createTempDirectory(dbParent, "kafka-throughput-db").resolve("stock.db");
                    try (SqliteInbox inbox = SqliteInbox.builder(db).build()) {
                        inbox.jdbi().useHandle(h -> {
                            h.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total BIGINT NOT NULL)");
                            h.execute("INSERT INTO stock (id, total) VALUES (1, 0)");
                        });
                        // The order alternates, so neither side always runs on a warmer JVM and page cache.
                        if (round % 2 == 1) {
                            plain.add(report("plain", batch, round, plain(broker, topic, batch, records, inbox.jdbi())));
                            kafka.add(report("inbox/KAFKA", batch, round, adapter(broker, topic, batch, records, inbox, OffsetStorage.KAFKA)));
                            database.add(report("inbox/DATABASE", batch, round, adapter(broker, topic, batch, records, inbox, OffsetStorage.DATABASE)));
                        } else {
                            database.add(report("inbox/DATABASE", batch, round, adapter(broker, topic, batch, records, inbox, OffsetStorage.DATABASE)));
                            kafka.add(report("inbox/KAFKA", batch, round, adapter(broker, topic, batch, records, inbox, OffsetStorage.KAFKA)));
                            plain.add(report("plain", batch, round, plain(broker, topic, batch, records, inbox.jdbi())));
                        }
                        long total = inbox.jdbi().withHandle(h -> h.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
                        long expected = 3L * 3 * records; // qty 3 each, consumed by three consumers
                        if (total != expected) {
                            throw new IllegalStateException("stock " + total + ", expected " + expected);
                        }
                    }
                }
                summary(batch, records, "inbox/KAFKA", kafka, plain);
                summary(batch, records, "inbox/DATABASE", database, plain);
            }
        }
    }

    private static void fill(KafkaBroker broker, String topic, int records) throws Exception {
        try (KafkaProducer<String, byte[]> producer = broker.producer()) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "r-" + i, "3".getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
    }

    private static Map<String, Object> config(KafkaBroker broker, int batch) {
        return Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, "bench-" + UUID.randomUUID(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, batch);
    }

    private static int qty(ConsumerRecord<String, byte[]> record) {
        return Integer.parseInt(new String(record.value(), StandardCharsets.UTF_8));
    }

    /** The baseline: auto-commit, one transaction per poll that adds each record's qty. */
    private static double plain(KafkaBroker broker, String topic, int batch, int records, Jdbi jdbi) {
        Map<String, Object> config = new java.util.HashMap<>(config(broker, batch));
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, true);
        // One connection for the whole run, as the inbox holds one: no connection is opened per poll.
        try (Handle handle = jdbi.open();
                KafkaConsumer<String, byte[]> consumer =
                        new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long consumed = 0;
            long started = 0;
            while (consumed < records) {
                ConsumerRecords<String, byte[]> polled = consumer.poll(Duration.ofMillis(500));
                if (polled.isEmpty()) {
                    continue;
                }
                if (started == 0) {
                    started = System.nanoTime();
                }
                handle.useTransaction(tx -> {
                    for (ConsumerRecord<String, byte[]> record : polled) {
                        tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty(record));
                    }
                });
                consumed += polled.count();
            }
            return rate(records, started);
        }
    }

    /** The adapter: one applyAll per partition batch, then the position. */
    private static double adapter(KafkaBroker broker, String topic, int batch, int records, SqliteInbox inbox,
            OffsetStorage storage) throws Exception {
        AtomicLong started = new AtomicLong();
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        KafkaInboxConsumer<Handle> consumer = KafkaInboxConsumer.builder(inbox, config(broker, batch),
                        (Handle tx, ConsumerRecord<String, byte[]> record) -> {
                            started.compareAndSet(0, System.nanoTime());
                            tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty(record));
                        })
                .topics(topic).offsetStorage(storage)
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onCommitted(TopicPartition partition, long nextOffset) {
                        if (nextOffset >= records) {
                            done.countDown();
                        }
                    }
                })
                .build();
        Thread thread = new Thread(consumer::run, "bench-consumer");
        thread.start();
        try {
            if (!done.await(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("the adapter did not consume the topic");
            }
            return rate(records, started.get());
        } finally {
            consumer.close();
            thread.join();
            // The next trial of the adapter reads the same ids again: a fresh inbox name keeps them new.
            inbox.jdbi().useHandle(h -> h.execute("DELETE FROM inbox_message"));
        }
    }

    private static double rate(int records, long startedNanos) {
        return records / ((System.nanoTime() - startedNanos) / 1e9);
    }

    private static double report(String what, int batch, int round, double rate) {
        System.out.printf(Locale.ROOT, "batch %3d round %d %-15s %10.0f msg/s%n", batch, round, what, rate);
        return rate;
    }

    private static void summary(int batch, int records, String what, List<Double> inbox, List<Double> plain) {
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < inbox.size(); i++) {
            ratios.add(inbox.get(i) / plain.get(i));
        }
        List<Double> sorted = new ArrayList<>(ratios);
        Collections.sort(sorted);
        System.out.printf(Locale.ROOT, "SUMMARY batch %d (%d records): %s/plain median %.2fx (range %.2f-%.2f);"
                        + " %s median %.0f msg/s, plain median %.0f msg/s%n",
                batch, records, what, sorted.get(sorted.size() / 2), sorted.get(0), sorted.get(sorted.size() - 1),
                what, median(inbox), median(plain));
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
