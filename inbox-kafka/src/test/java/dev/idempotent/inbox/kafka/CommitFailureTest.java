package dev.idempotent.inbox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Failures that break a partition's whole transaction rather than one record's savepoint, on a
 * real broker and PostgreSQL: a deferred foreign key that only COMMIT checks, and a lock timeout
 * inside the effect. No record is skipped that was neither applied nor handed to the listener.
 */
class CommitFailureTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path brokerDir;

    static KafkaBroker broker;

    @TempDir
    Path dbDir;

    private TestDatabase db;
    private JdbiInbox inbox;
    private String topic;
    private String group;
    /** Each listener call in order: "rejected key@offset" or "committed next". */
    private final List<String> events = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, AtomicInteger> effectRuns = new ConcurrentHashMap<>();

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
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        topic = "receipts-" + suffix;
        group = "warehouse-" + suffix;
        broker.createTopic(topic, 1);
        db = TestDatabase.create(TestDatabase.Kind.POSTGRES, dbDir);
        inbox = db.inbox().busyTimeout(Duration.ofMillis(200)).build();
        db.jdbi().useHandle(h -> {
            h.execute("CREATE TABLE shelf (id TEXT PRIMARY KEY)");
            h.execute("INSERT INTO shelf (id) VALUES ('A'), ('held')");
            // Checked at COMMIT only: a record naming a missing shelf fails its whole transaction.
            h.execute("CREATE TABLE stock (id TEXT PRIMARY KEY, shelf TEXT NOT NULL"
                    + " REFERENCES shelf (id) DEFERRABLE INITIALLY DEFERRED)");
        });
    }

    @AfterEach
    void tearDown() {
        inbox.close();
        db.close();
    }

    private Map<String, Object> config() {
        return Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    }

    private KafkaInboxConsumer.Builder<Handle> builder(RecordEffect<Handle> effect) {
        return KafkaInboxConsumer.builder(inbox, config(), (Handle tx, ConsumerRecord<String, byte[]> record) -> {
                    effectRuns.computeIfAbsent(record.key(), k -> new AtomicInteger()).incrementAndGet();
                    effect.apply(tx, record);
                })
                .topics(topic)
                .retryBackoff(Duration.ofMillis(20))
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onRejected(Handle tx, ConsumerRecord<String, byte[]> record, Exception failure) {
                        events.add("rejected " + record.key() + "@" + record.offset());
                    }

                    @Override
                    public void onCommitted(TopicPartition partition, long nextOffset) {
                        events.add("committed " + nextOffset);
                    }
                });
    }

    /** Stocks the record on the shelf its value names. */
    private static RecordEffect<Handle> shelve() {
        return (tx, record) -> tx.execute("INSERT INTO stock (id, shelf) VALUES (?, ?)", record.key(),
                new String(record.value(), StandardCharsets.UTF_8));
    }

    private long position() {
        synchronized (events) {
            return events.stream().filter(e -> e.startsWith("committed ")).mapToLong(e -> Long.parseLong(e.substring(10)))
                    .max().orElse(-1);
        }
    }

    private boolean rejectedAny() {
        synchronized (events) {
            return events.stream().anyMatch(e -> e.startsWith("rejected"));
        }
    }

    /** Ends the lock holder's transaction, if a failed assertion left it open, and closes it. */
    private static void release(Handle holder) {
        try {
            if (holder.isInTransaction()) {
                holder.rollback();
            }
        } finally {
            holder.close();
        }
    }

    private List<String> stocked() {
        return db.jdbi().withHandle(h -> h.createQuery("SELECT id FROM stock ORDER BY id").mapTo(String.class).list());
    }

    private long kafkaCommitted() throws Exception {
        try (Admin admin = broker.admin()) {
            OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS).get(new TopicPartition(topic, 0));
            return offset == null ? -1 : offset.offset();
        }
    }

    /**
     * A batch of 100 with one record that fails only at COMMIT: the 99 are applied and their
     * position committed, the one is tried alone up to its limit and then handed to the listener,
     * and the position passes it only after that hand-off.
     */
    @ParameterizedTest
    @EnumSource(OffsetStorage.class)
    void oneRecordFailingAtCommitIsFoundAloneRetriedToItsLimitAndHandedOff(OffsetStorage storage) throws Exception {
        List<Map.Entry<String, String>> records = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            records.add(Map.entry(String.format("r%03d", i), i == 42 ? "missing" : "A"));
        }
        broker.send(topic, 0, records);

        try (Running running = Running.start(builder(shelve()).maxEffectAttempts(3).offsetStorage(storage).build())) {
            Running.await(WAIT, () -> running.failure() != null || position() >= 100,
                    () -> "events " + events.subList(Math.max(0, events.size() - 10), events.size()));
            assertNull(running.failure());
        }

        List<String> expected = new ArrayList<>();
        records.forEach(r -> expected.add(r.getKey()));
        expected.remove("r042");
        assertEquals(expected, stocked(), "the 99 applied");
        assertEquals(99, inbox.stats().applied());
        List<String> rejections = events.stream().filter(e -> e.startsWith("rejected")).toList();
        assertEquals(List.of("rejected r042@42"), rejections, "the one handed off, once");
        assertTrue(effectRuns.get("r042").get() >= 3, "tried up to its limit: " + effectRuns.get("r042"));
        // All 100 were on the broker before the consumer started, so the first poll took them all.
        assertEquals(2, effectRuns.get("r000").get(), "run in the batch of 100, rolled back with it, then alone");
        int handOff = events.indexOf("rejected r042@42");
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i).startsWith("committed ")) {
                long next = Long.parseLong(events.get(i).substring(10));
                assertTrue(next <= 42 || i > handOff, "position " + next + " before the hand-off: " + events);
            }
        }
        assertTrue(events.contains("committed 42"), "the records before it committed first: " + events);
        assertEquals(100, kafkaCommitted());
        if (storage == OffsetStorage.DATABASE) {
            assertEquals(100L, (long) db.jdbi().withHandle(h -> h.createQuery("SELECT next_offset FROM " + db.offsets())
                    .mapTo(Long.class).one()));
        }
    }

    /**
     * An effect failure in a batch that then fails at COMMIT through another record counts no
     * attempt: only attempts whose transaction committed do, so a record that fails twice and then
     * passes is applied, not rejected, with two attempts allowed.
     */
    @Test
    void effectFailureInABatchThatFailsAtCommitCountsNoAttempt() throws Exception {
        broker.send(topic, 0, List.of(Map.entry("flaky", "A"), Map.entry("bad", "missing"), Map.entry("c", "A")));
        AtomicInteger flakyFailuresLeft = new AtomicInteger(2);

        try (Running running = Running.start(builder((tx, record) -> {
            if (record.key().equals("flaky") && flakyFailuresLeft.getAndDecrement() > 0) {
                throw new IllegalStateException("shelf A is being counted");
            }
            shelve().apply(tx, record);
        }).maxEffectAttempts(2).build())) {
            Running.await(WAIT, () -> running.failure() != null || position() >= 3, () -> "events " + events);
            assertNull(running.failure());
        }

        assertEquals(List.of("c", "flaky"), stocked());
        assertEquals(List.of("rejected bad@1"), events.stream().filter(e -> e.startsWith("rejected")).toList());
    }

    /**
     * A lock timeout inside the effect (PostgreSQL's 55P03, from the lock_timeout the inbox sets) is
     * the busy database's, not the record's: retried past the effect attempt limit, never rejected,
     * and the position stays before the record until it applies.
     */
    @Test
    void lockTimeoutInsideTheEffectNeverMovesThePositionPastTheRecord() throws Exception {
        db.jdbi().useHandle(h -> h.execute("INSERT INTO stock (id, shelf) VALUES ('counter', 'A')"));
        broker.send(topic, 0, List.of(Map.entry("a", "A"), Map.entry("locked", "A"), Map.entry("c", "A")));
        Handle holder = db.jdbi().open();
        holder.begin();
        holder.execute("SELECT id FROM stock WHERE id = 'counter' FOR UPDATE"); // another writer holds the row
        try (Running running = Running.start(builder((tx, record) -> {
            if (record.key().equals("locked")) {
                tx.execute("UPDATE stock SET shelf = 'A' WHERE id = 'counter'"); // waits for the lock, times out
            }
            shelve().apply(tx, record);
        }).maxEffectAttempts(2).build())) {
            Running.await(WAIT, () -> running.failure() != null || rejectedAny()
                    || effectRuns.getOrDefault("locked", new AtomicInteger()).get() >= 5,
                    () -> "runs " + effectRuns + ", events " + events);
            assertNull(running.failure());
            assertEquals(List.of(), events.stream().filter(e -> e.startsWith("rejected")).toList());
            assertTrue(position() <= 1, "the position passed the record it never applied: " + events);
            holder.rollback();
            Running.await(WAIT, () -> running.failure() != null || position() >= 3, () -> "events " + events);
        } finally {
            release(holder);
        }
        assertEquals(List.of(), events.stream().filter(e -> e.startsWith("rejected")).toList());
        assertEquals(List.of("a", "c", "counter", "locked"), stocked());
    }

    /**
     * The same on MariaDB: a lock wait timeout inside the effect (error 1205, from the
     * innodb_lock_wait_timeout the inbox sets) never moves the position past the record.
     */
    @Test
    void lockWaitTimeoutInsideTheEffectOnMariaDbNeverMovesThePositionPastTheRecord() throws Exception {
        try (TestDatabase maria = TestDatabase.create(TestDatabase.Kind.MARIADB, dbDir);
                JdbiInbox mariaInbox = maria.inbox().busyTimeout(Duration.ofSeconds(1)).build()) {
            maria.jdbi().useHandle(h -> {
                h.execute("CREATE TABLE counter (id VARCHAR(20) PRIMARY KEY, n INT NOT NULL)");
                h.execute("INSERT INTO counter (id, n) VALUES ('held', 0)");
                h.execute("CREATE TABLE applied (id VARCHAR(20) PRIMARY KEY)");
            });
            broker.send(topic, 0, List.of(Map.entry("a", "A"), Map.entry("locked", "A"), Map.entry("c", "A")));
            Handle holder = maria.jdbi().open();
            holder.begin();
            holder.execute("SELECT id FROM counter WHERE id = 'held' FOR UPDATE"); // another writer holds the row
            try (Running running = Running.start(KafkaInboxConsumer.builder(mariaInbox, config(),
                            (Handle tx, ConsumerRecord<String, byte[]> record) -> {
                                effectRuns.computeIfAbsent(record.key(), k -> new AtomicInteger()).incrementAndGet();
                                if (record.key().equals("locked")) {
                                    tx.execute("UPDATE counter SET n = n + 1 WHERE id = 'held'");
                                }
                                tx.execute("INSERT INTO applied (id) VALUES (?)", record.key());
                            })
                    .topics(topic).maxEffectAttempts(2).retryBackoff(Duration.ofMillis(20))
                    .listener(new KafkaInboxListener<>() {
                        @Override
                        public void onRejected(Handle tx, ConsumerRecord<String, byte[]> record, Exception failure) {
                            events.add("rejected " + record.key() + "@" + record.offset());
                        }

                        @Override
                        public void onCommitted(TopicPartition partition, long nextOffset) {
                            events.add("committed " + nextOffset);
                        }
                    }).build())) {
                Running.await(WAIT, () -> running.failure() != null || rejectedAny()
                                || effectRuns.getOrDefault("locked", new AtomicInteger()).get() >= 4,
                        () -> "runs " + effectRuns + ", events " + events);
                assertNull(running.failure());
                assertEquals(List.of(), events.stream().filter(e -> e.startsWith("rejected")).toList());
                assertTrue(position() <= 1, "the position passed the record it never applied: " + events);
                holder.rollback();
                Running.await(WAIT, () -> running.failure() != null || position() >= 3, () -> "events " + events);
            } finally {
                release(holder);
            }
            assertEquals(List.of(), events.stream().filter(e -> e.startsWith("rejected")).toList());
            assertEquals(List.of("a", "c", "locked"), maria.jdbi().withHandle(h -> h.createQuery(
                    "SELECT id FROM applied ORDER BY id").mapTo(String.class).list()));
        }
    }

    /**
     * On SQLite with foreign keys on, a deferred key fails COMMIT and SQLite keeps the transaction
     * open. Two such records in one batch, with a conflict between them, under DATABASE offsets:
     * each bad one is handed off once, the conflict is reported once, the rest applied once.
     */
    @Test
    void twoRecordsFailingAtCommitOnSqliteWithAConflictBetween() throws Exception {
        Path file = dbDir.resolve("deferred.db");
        org.jdbi.v3.core.Jdbi jdbi = org.jdbi.v3.core.Jdbi.create("jdbc:sqlite:" + file + "?foreign_keys=true");
        jdbi.useHandle(h -> {
            h.execute("CREATE TABLE shelf (id TEXT PRIMARY KEY)");
            h.execute("INSERT INTO shelf (id) VALUES ('A')");
            h.execute("CREATE TABLE stock (id TEXT PRIMARY KEY, shelf TEXT NOT NULL"
                    + " REFERENCES shelf (id) DEFERRABLE INITIALLY DEFERRED)");
            h.execute("CREATE TABLE refused (id TEXT NOT NULL, kafka_offset INTEGER NOT NULL)");
        });
        broker.send(topic, 0, List.of(Map.entry("r000", "A"), Map.entry("r001", "missing"), Map.entry("r002", "A"),
                Map.entry("r000", "B"), Map.entry("r004", "missing"), Map.entry("r005", "A")));
        try (JdbiInbox sqlite = dev.idempotent.inbox.sqlite.SqliteInbox.builder(jdbi).busyTimeout(Duration.ofMillis(200))
                        .tables(dev.idempotent.inbox.InboxTables.prefix(TestDatabase.PREFIX)).build();
                Running running = Running.start(KafkaInboxConsumer.builder(sqlite, config(),
                                (Handle tx, ConsumerRecord<String, byte[]> record) -> {
                                    effectRuns.computeIfAbsent(record.key(), k -> new AtomicInteger()).incrementAndGet();
                                    shelve().apply(tx, record);
                                })
                        .topics(topic)
                        .retryBackoff(Duration.ofMillis(20))
                        .maxEffectAttempts(2)
                        .offsetStorage(OffsetStorage.DATABASE)
                        .listener(new KafkaInboxListener<>() {
                            @Override
                            public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record,
                                    dev.idempotent.inbox.Outcome.Conflict<?> conflict) {
                                tx.execute("INSERT INTO refused (id, kafka_offset) VALUES (?, ?)", record.key(),
                                        record.offset());
                            }

                            @Override
                            public void onRejected(Handle tx, ConsumerRecord<String, byte[]> record, Exception failure) {
                                tx.execute("INSERT INTO refused (id, kafka_offset) VALUES (?, ?)", record.key(),
                                        record.offset());
                            }

                            @Override
                            public void onCommitted(TopicPartition partition, long nextOffset) {
                                events.add("committed " + nextOffset);
                            }
                        }).build())) {
            Running.await(WAIT, () -> running.failure() != null || position() >= 6,
                    () -> "events " + events.subList(Math.max(0, events.size() - 10), events.size()));
            assertNull(running.failure());
        }
        assertEquals(List.of("r000", "r002", "r005"),
                jdbi.withHandle(h -> h.createQuery("SELECT id FROM stock ORDER BY id").mapTo(String.class).list()));
        assertEquals(List.of("r000@3", "r001@1", "r004@4"), jdbi.withHandle(h -> h.createQuery(
                "SELECT id || '@' || kafka_offset FROM refused ORDER BY id").mapTo(String.class).list()),
                "each hand-off and the conflict once");
        assertEquals(6L, (long) jdbi.<Long, RuntimeException>withHandle(h -> h.createQuery(
                "SELECT next_offset FROM " + TestDatabase.PREFIX + "kafka_offset").mapTo(Long.class).one()));
    }

    /**
     * Two partitions in one poll, only one with a record failing at COMMIT: the other is applied
     * and committed while the first retries record by record; each partition's Kafka position ends
     * past its last record, the bad one handed off once.
     */
    @Test
    void onlyOnePartitionFailingAtCommitHoldsBackNoOther() throws Exception {
        String two = topic + "-two";
        broker.createTopic(two, 2);
        List<Map.Entry<String, String>> first = new ArrayList<>();
        List<Map.Entry<String, String>> second = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            first.add(Map.entry(String.format("p%03d", i), i == 4 ? "missing" : "A"));
            second.add(Map.entry(String.format("q%03d", i), "A"));
        }
        broker.send(two, 0, first);
        broker.send(two, 1, second);
        try (Running running = Running.start(builder(shelve()).topics(two).maxEffectAttempts(2).build())) {
            Running.await(WAIT, () -> running.failure() != null || stocked().size() == 19 && rejectedAny()
                            && kafkaCommitted(two, 0) == 10 && kafkaCommitted(two, 1) == 10,
                    () -> "events " + events.subList(Math.max(0, events.size() - 10), events.size()));
            assertNull(running.failure());
        }
        assertEquals(List.of("rejected p004@4"), events.stream().filter(e -> e.startsWith("rejected")).toList());
        assertEquals(19, inbox.stats().applied());
    }

    private long kafkaCommitted(String topic, int partition) {
        try (Admin admin = broker.admin()) {
            OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS).get(new TopicPartition(topic, partition));
            return offset == null ? -1 : offset.offset();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
