package dev.idempotent.inbox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker killed and restarted under a batch in flight; and positions the database alone decides. */
class BrokerRestartTest {

    private static final Duration WAIT = Duration.ofSeconds(90);

    @TempDir
    static Path brokerDir;

    static KafkaBroker broker;

    @TempDir
    Path dbDir;

    @BeforeAll
    static void startBroker() {
        broker = KafkaBroker.start(brokerDir);
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    private static Map<String, Object> config(String group) {
        return Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50,
                ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
    }

    private static SqliteInbox ledger(Path file) {
        SqliteInbox inbox = SqliteInbox.builder(file).tables(InboxTables.prefix(TestDatabase.PREFIX)).build();
        inbox.jdbi().useHandle(h -> h.execute("CREATE TABLE IF NOT EXISTS applied (id TEXT NOT NULL, qty INTEGER NOT NULL)"));
        return inbox;
    }

    private static void apply(Handle tx, ConsumerRecord<String, byte[]> record) {
        tx.execute("INSERT INTO applied (id, qty) VALUES (?, ?)", record.key(),
                Integer.parseInt(new String(record.value(), StandardCharsets.UTF_8)));
    }

    private static List<Map.Entry<String, String>> receipts(String prefix, int count) {
        List<Map.Entry<String, String>> receipts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            receipts.add(Map.entry(prefix + i, Integer.toString(1 + i % 5)));
            if (i % 4 == 0) {
                receipts.add(Map.entry(prefix + i, Integer.toString(1 + i % 5))); // a resend
            }
        }
        return receipts;
    }

    private static long expectedSum(int count) {
        long sum = 0;
        for (int i = 0; i < count; i++) {
            sum += 1 + i % 5;
        }
        return sum;
    }

    private static long[] countAndSum(SqliteInbox inbox) {
        return inbox.jdbi().withHandle(h -> h.createQuery("SELECT COUNT(*), COUNT(DISTINCT id), COALESCE(SUM(qty), 0) FROM applied")
                .map((rs, ctx) -> new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)}).one());
    }

    @Test
    void brokerKilledMidBatchAndRestartedLosesNothingAndAppliesNothingTwice() throws Exception {
        String topic = "receipts-" + UUID.randomUUID();
        broker.createTopic(topic, 1);
        broker.send(topic, 0, receipts("a", 200));
        SqliteInbox inbox = ledger(dbDir.resolve("ledger.db"));
        CountDownLatch inBatch = new CountDownLatch(1);
        CountDownLatch brokerDown = new CountDownLatch(1);
        Map<TopicPartition, Long> committed = new ConcurrentHashMap<>();
        KafkaInboxConsumer<Handle> consumer = KafkaInboxConsumer.builder(inbox, config("g-" + UUID.randomUUID()),
                        (Handle tx, ConsumerRecord<String, byte[]> record) -> {
                            if (record.offset() == 120) { // in the middle of a batch: hold it until the broker is gone
                                inBatch.countDown();
                                assertTrue(brokerDown.await(60, TimeUnit.SECONDS));
                            }
                            apply(tx, record);
                        })
                .topics(topic).commitTimeout(Duration.ofSeconds(2)).retryBackoff(Duration.ofMillis(100))
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onCommitted(TopicPartition partition, long nextOffset) {
                        committed.put(partition, nextOffset);
                    }
                })
                .build();
        try (Running running = Running.start(consumer)) {
            assertTrue(inBatch.await(60, TimeUnit.SECONDS));
            broker.kill();
            brokerDown.countDown(); // the batch commits in the database while Kafka is unreachable
            broker.restart();
            broker.send(topic, 0, receipts("b", 100));
            int records = receipts("a", 200).size() + receipts("b", 100).size();
            Running.await(WAIT, () -> committed.getOrDefault(new TopicPartition(topic, 0), 0L) >= records,
                    () -> "committed " + committed + ", failure " + running.failure());
        } finally {
            inbox.close();
        }
        SqliteInbox reopened = ledger(dbDir.resolve("ledger.db"));
        try {
            long[] ledger = countAndSum(reopened);
            assertEquals(300, ledger[1], "every id applied");
            assertEquals(ledger[1], ledger[0], "none applied twice");
            assertEquals(expectedSum(200) + expectedSum(100), ledger[2]);
        } finally {
            reopened.close();
        }
    }

    @Test
    void withDatabaseOffsetsTheDatabaseAloneDecidesWhereConsumingResumes() throws Exception {
        String topic = "receipts-" + UUID.randomUUID();
        String group = "g-" + UUID.randomUUID();
        broker.createTopic(topic, 1);
        List<Map.Entry<String, String>> first = receipts("a", 80);
        broker.send(topic, 0, first);
        Path file = dbDir.resolve("ledger.db");
        consumeUntil(file, topic, group, first.size());

        // Kafka's committed offset is rewound to the start; the database's position must win.
        try (Admin admin = broker.admin()) {
            admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0)))
                    .all().get(30, TimeUnit.SECONDS);
        }
        broker.send(topic, 0, receipts("b", 20));
        SqliteInbox second = consumeUntil(file, topic, group, first.size() + receipts("b", 20).size());
        try {
            assertEquals(5, second.stats().duplicates(),
                    "only the resends among the new records; nothing before the database's position was read again");
            assertEquals(20, second.stats().applied());
            long[] ledger = countAndSum(second);
            assertEquals(100, ledger[0]);
            assertEquals(expectedSum(80) + expectedSum(20), ledger[2]);
        } finally {
            second.close();
        }
    }

    /** Runs a DATABASE-offsets consumer until its position reaches {@code end}; returns its open inbox. */
    private SqliteInbox consumeUntil(Path file, String topic, String group, long end) throws Exception {
        SqliteInbox inbox = ledger(file);
        Map<TopicPartition, Long> committed = new ConcurrentHashMap<>();
        try (Running running = Running.start(KafkaInboxConsumer.builder(inbox, config(group), BrokerRestartTest::apply)
                .topics(topic).offsetStorage(OffsetStorage.DATABASE)
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onCommitted(TopicPartition partition, long nextOffset) {
                        committed.put(partition, nextOffset);
                    }
                }).build())) {
            Running.await(WAIT, () -> committed.getOrDefault(new TopicPartition(topic, 0), 0L) >= end,
                    () -> "committed " + committed + ", failure " + running.failure());
        }
        long stored = inbox.jdbi().withHandle(h -> h.createQuery(
                        "SELECT next_offset FROM " + inbox.tables().kafkaOffsetTable() + " WHERE consumer_group = ? AND topic = ?")
                .bind(0, group).bind(1, topic).mapTo(Long.class).one());
        assertEquals(end, stored, "the position is in the database");
        return inbox;
    }
}
