package dev.idempotent.inbox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each outcome and failure of a record, and what it does to the position, against a real broker
 * and a real SQLite file. One partition, so a poll's records form one batch.
 */
class OutcomeMappingTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path brokerDir;

    static KafkaBroker broker;

    @TempDir
    Path dbDir;

    private String topic;
    private String group;
    private SqliteInbox inbox;
    private final List<String> conflicts = Collections.synchronizedList(new ArrayList<>());
    private final List<String> rejected = Collections.synchronizedList(new ArrayList<>());
    private final Map<TopicPartition, Long> committed = Collections.synchronizedMap(new HashMap<>());

    @BeforeAll
    static void startBroker() {
        broker = KafkaBroker.start(brokerDir);
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    @BeforeEach
    void setUp() {
        topic = "receipts-" + UUID.randomUUID();
        group = "warehouse-" + UUID.randomUUID();
        broker.createTopic(topic, 1);
        inbox = SqliteInbox.builder(dbDir.resolve("stock.db")).build();
        inbox.jdbi().useHandle(h -> h.execute("CREATE TABLE stock (id TEXT PRIMARY KEY, qty INTEGER NOT NULL)"));
    }

    @AfterEach
    void tearDown() {
        inbox.close();
    }

    private Map<String, Object> config() {
        return Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    }

    private KafkaInboxConsumer.Builder<Handle> builder(RecordEffect<Handle> effect) {
        return KafkaInboxConsumer.builder(inbox, config(), effect)
                .topics(topic)
                .retryBackoff(Duration.ofMillis(50))
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record,
                            dev.idempotent.inbox.Outcome.Conflict<?> conflict) {
                        conflicts.add(record.key() + "@" + record.offset());
                    }

                    @Override
                    public void onRejected(Handle tx, ConsumerRecord<String, byte[]> record, Exception failure) {
                        rejected.add(record.key() + "@" + record.offset() + ":" + failure.getClass().getSimpleName());
                    }

                    @Override
                    public void onCommitted(TopicPartition partition, long nextOffset) {
                        committed.put(partition, nextOffset);
                    }
                });
    }

    private static RecordEffect<Handle> stockEffect() {
        return (tx, record) -> tx.execute("INSERT INTO stock (id, qty) VALUES (?, ?)", record.key(), qty(record));
    }

    private static int qty(ConsumerRecord<String, byte[]> record) {
        return Integer.parseInt(new String(record.value(), StandardCharsets.UTF_8));
    }

    private long total() {
        return inbox.jdbi().withHandle(h -> h.createQuery("SELECT COALESCE(SUM(qty), 0) FROM stock").mapTo(Long.class).one());
    }

    private long kafkaCommitted() throws Exception {
        try (Admin admin = broker.admin()) {
            OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS).get(new TopicPartition(topic, 0));
            return offset == null ? -1 : offset.offset();
        }
    }

    private void awaitPosition(long next) {
        Running.await(WAIT, () -> committed.getOrDefault(new TopicPartition(topic, 0), -1L) >= next,
                () -> "position " + committed + ", rejected " + rejected);
    }

    @Test
    void appliedDuplicateAndConflictAreConsumedAndOnlyTheConflictIsReported() throws Exception {
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("b", "2"), Map.entry("a", "1"),
                Map.entry("b", "9"), Map.entry("c", "4")));

        try (Running running = Running.start(builder(stockEffect()).build())) {
            awaitPosition(5);
        }

        assertEquals(1 + 2 + 4, total(), "each id applied once, the conflict changed nothing");
        assertEquals(List.of("b@3"), conflicts);
        assertEquals(List.of(), rejected);
        assertEquals(5, kafkaCommitted(), "committed to Kafka after the database commit");
        assertEquals(3, inbox.stats().applied());
    }

    @Test
    void unreadableAndInvalidRecordsAreRejectedInTheBatchAndSkipped() throws Exception {
        broker.send(topic, 0, List.of(Map.entry("a", "1")));
        try (var producer = broker.producer()) {
            producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, null,
                    "5".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
        }
        broker.send(topic, 0, List.of(Map.entry("x".repeat(300), "1"), Map.entry("c", "4")));

        try (Running running = Running.start(builder(stockEffect()).build())) {
            awaitPosition(4);
        }

        assertEquals(1 + 4, total());
        assertEquals(List.of("null@1:InvalidMessageException", "x".repeat(300) + "@2:InvalidMessageException"),
                rejected, "a record without a key, and one whose id is too long");
        assertEquals(4, kafkaCommitted());
    }

    @Test
    void effectFailureIsRetriedAndThenRejectedWhileTheRecordsAroundItApply() throws Exception {
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("broken", "7"), Map.entry("c", "4")));
        List<String> attempts = Collections.synchronizedList(new ArrayList<>());

        try (Running running = Running.start(builder((tx, record) -> {
            attempts.add(record.key());
            if (record.key().equals("broken")) {
                throw new IllegalStateException("shelf for broken is missing");
            }
            stockEffect().apply(tx, record);
        }).maxEffectAttempts(3).build())) {
            awaitPosition(3);
        }

        assertEquals(3, attempts.stream().filter("broken"::equals).count(), "tried maxEffectAttempts times");
        assertEquals(List.of("broken@1:IllegalStateException"), rejected);
        assertEquals(1 + 4, total());
        assertEquals(1, attempts.stream().filter("a"::equals).count(), "a before it is applied once");
        assertTrue(attempts.stream().filter("c"::equals).count() >= 1);
        assertEquals(3, kafkaCommitted());
    }

    @Test
    void effectFailureThatPassesIsAppliedOnRetryAndNothingIsRejected() throws Exception {
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("flaky", "7")));
        int[] failuresLeft = {1};

        try (Running running = Running.start(builder((tx, record) -> {
            if (record.key().equals("flaky") && failuresLeft[0]-- > 0) {
                throw new IllegalStateException("flaky shelf");
            }
            stockEffect().apply(tx, record);
        }).build())) {
            awaitPosition(2);
        }

        assertEquals(8, total());
        assertEquals(List.of(), rejected);
    }

    @Test
    void retryableFailureOfOneRecordIsRetriedBeyondTheEffectAttemptsAndNeverRejected() throws Exception {
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("deadlocked", "7"), Map.entry("c", "4")));
        int[] failuresLeft = {5}; // more than maxEffectAttempts: a RETRYABLE failure has no limit

        try (Running running = Running.start(builder((tx, record) -> {
            if (record.key().equals("deadlocked") && failuresLeft[0]-- > 0) {
                throw new java.sql.SQLTransientException("deadlock detected", "40P01");
            }
            stockEffect().apply(tx, record);
        }).maxEffectAttempts(2).build())) {
            awaitPosition(3);
        }

        assertEquals(1 + 7 + 4, total(), "applied once it passed; c, applied with the first try, was a duplicate later");
        assertEquals(List.of(), rejected);
        assertEquals(3, inbox.stats().applied());
        assertTrue(inbox.stats().duplicates() >= 1, "c came back after the position stopped before 'deadlocked'");
    }

    @Test
    void permanentFailureOfTheWholeBatchStopsTheConsumerWithoutMovingThePosition() throws Exception {
        broker.send(topic, 0, List.of(Map.entry("a", "1")));
        KafkaInboxConsumer<Handle> consumer = builder(stockEffect()).build();
        inbox.close(); // the inbox refuses every batch from now on

        dev.idempotent.inbox.InboxException refused =
                assertThrows(dev.idempotent.inbox.InboxException.class, consumer::run);

        assertTrue(refused.getMessage().contains("closed"), refused.getMessage());
        assertEquals(-1, kafkaCommitted(), "nothing committed to Kafka");
        inbox = SqliteInbox.builder(dbDir.resolve("stock.db")).build(); // for tearDown
    }

    @Test
    void busyDatabaseFailsTheBatchWhichIsRetriedUntilTheLockIsReleased() throws Exception {
        SqliteInbox impatient = SqliteInbox.builder(dbDir.resolve("stock.db")).busyTimeout(Duration.ofMillis(50)).build();
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("b", "2")));
        Handle holder = inbox.jdbi().open();
        holder.execute("BEGIN IMMEDIATE"); // another writer holds SQLite's write lock
        try (Running running = Running.start(KafkaInboxConsumer.builder(impatient, config(), stockEffect())
                .topics(topic).retryBackoff(Duration.ofMillis(50))
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onCommitted(TopicPartition partition, long nextOffset) {
                        committed.put(partition, nextOffset);
                    }
                }).build())) {
            Running.await(WAIT, () -> impatient.stats().busy() >= 2, () -> "busy " + impatient.stats());
            assertNull(committed.get(new TopicPartition(topic, 0)), "no position moved while nothing applied");
            holder.execute("ROLLBACK");
            awaitPosition(2);
        } finally {
            holder.close();
            impatient.close();
        }
        assertEquals(3, total());
        assertEquals(2, kafkaCommitted());
    }

    /** The consumer of the README's "From Kafka", with the broker, topic and file of this test. */
    private static KafkaInboxConsumer<Handle> readmeConsumer(String bootstrap, String topic, Path file) {
        // README snippet starts
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, "warehouse",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        SqliteInbox inbox = SqliteInbox.builder(file).build();
        KafkaInboxConsumer<Handle> consumer = KafkaInboxConsumer.builder(inbox, config,
                        (Handle tx, ConsumerRecord<String, byte[]> record) -> tx.execute(
                                "UPDATE stock SET total = total + ? WHERE id = 1", qty(record)))
                .topics(topic)
                .offsetStorage(OffsetStorage.DATABASE)
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record, Outcome.Conflict<?> c) {
                        tx.execute("INSERT INTO refused (id, kafka_offset) VALUES (?, ?)", record.key(), record.offset());
                    }
                })
                .build();
        // README snippet ends
        return consumer;
    }

    /** The position in table inbox_kafka_offset, or -1 before the consumer created it. */
    private static long storedPosition(org.jdbi.v3.core.Jdbi jdbi) {
        try {
            return jdbi.withHandle(h -> h.createQuery("SELECT next_offset FROM inbox_kafka_offset")
                    .mapTo(Long.class).findOne().orElse(-1L));
        } catch (org.jdbi.v3.core.JdbiException noTableYet) {
            return -1;
        }
    }

    @Test
    void readmeConsumerAppliesOnceAndRecordsTheConflictWithTheBatch() throws Exception {
        Path file = dbDir.resolve("readme.db");
        org.jdbi.v3.core.Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(h -> {
            h.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
            h.execute("INSERT INTO stock (id, total) VALUES (1, 0)");
            h.execute("CREATE TABLE refused (id TEXT NOT NULL, kafka_offset INTEGER NOT NULL)");
        });
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("a", "1"), Map.entry("a", "5"), Map.entry("b", "2")));
        KafkaInboxConsumer<Handle> consumer = readmeConsumer(broker.bootstrap(), topic, file);

        try (Running running = Running.start(consumer)) {
            Running.await(WAIT, () -> storedPosition(jdbi) >= 4, () -> "failure " + running.failure());
        }

        assertEquals(3, (long) jdbi.withHandle(h -> h.createQuery("SELECT total FROM stock").mapTo(Long.class).one()));
        assertEquals(List.of("a@2"), jdbi.withHandle(h -> h.createQuery("SELECT id || '@' || kafka_offset FROM refused")
                .mapTo(String.class).list()));
    }

    @Test
    void configurationThatWouldCommitBeforeTheDatabaseIsRefused() {
        Map<String, Object> autoCommit = new HashMap<>(config());
        autoCommit.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> KafkaInboxConsumer.builder(inbox, autoCommit, stockEffect()));
        assertTrue(refused.getMessage().contains("enable.auto.commit"), refused.getMessage());

        Map<String, Object> noGroup = new HashMap<>(config());
        noGroup.remove(ConsumerConfig.GROUP_ID_CONFIG);
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> KafkaInboxConsumer.builder(inbox, noGroup, stockEffect())).getMessage().contains("group.id"));
        assertThrows(IllegalStateException.class, () -> KafkaInboxConsumer.builder(inbox, config(), stockEffect()).build());
    }

    @Test
    void recordWithoutAKeyIsRefusedByTheDefaultReader() {
        assertInstanceOf(InvalidMessageException.class, assertThrows(InvalidMessageException.class,
                () -> RecordReader.keyAndBytes().read(new ConsumerRecord<>(topic, 0, 0, null, new byte[0]))));
    }
}
