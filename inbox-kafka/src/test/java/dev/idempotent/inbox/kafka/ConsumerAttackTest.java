package dev.idempotent.inbox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.postgres.FaultRelay;
import dev.idempotent.inbox.postgres.PostgresInbox;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
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
 * Attempts to make the consumer skip a record, against a real broker and PostgreSQL: a database
 * outage far longer than the effect attempt limit, a rebalance while a batch is stuck in its
 * effect, and an {@link Error} thrown by an effect. Each record's effect writes a ledger row whose
 * primary key is the record's id, so a record applied twice fails its batch, and one skipped is
 * missing at the end.
 */
class ConsumerAttackTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path brokerDir;

    static KafkaBroker broker;

    @TempDir
    Path dbDir;

    private TestDatabase db;
    private String topic;
    private String group;
    private final List<String> rejected = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, Long> positions = Collections.synchronizedMap(new HashMap<>());

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
        db.jdbi().useHandle(h -> h.execute("CREATE TABLE ledger (id TEXT PRIMARY KEY, applied_by TEXT NOT NULL)"));
    }

    @AfterEach
    void tearDown() {
        db.close();
    }

    private Map<String, Object> config(Map<String, Object> extra) {
        Map<String, Object> config = new HashMap<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"));
        config.putAll(extra);
        return config;
    }

    private KafkaInboxConsumer.Builder<Handle> builder(JdbiInbox inbox, String name, Map<String, Object> extra,
            RecordEffect<Handle> before) {
        return KafkaInboxConsumer.builder(inbox, config(extra), (Handle tx, ConsumerRecord<String, byte[]> record) -> {
                    before.apply(tx, record);
                    tx.execute("INSERT INTO ledger (id, applied_by) VALUES (?, ?)", record.key(), name);
                })
                .topics(topic)
                .maxEffectAttempts(2)
                .retryBackoff(Duration.ofMillis(20))
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onRejected(Handle tx, ConsumerRecord<String, byte[]> record, Exception failure) {
                        rejected.add(name + ": " + record.key() + "@" + record.offset() + " " + failure);
                    }

                    @Override
                    public void onCommitted(TopicPartition partition, long nextOffset) {
                        positions.merge(name, nextOffset, Math::max);
                    }
                });
    }

    private static List<Map.Entry<String, String>> records(String prefix, int count) {
        List<Map.Entry<String, String>> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(Map.entry(String.format("%s%03d", prefix, i), "1"));
        }
        return records;
    }

    private long ledgerRows() {
        return db.jdbi().withHandle(h -> h.createQuery("SELECT COUNT(*) FROM ledger").mapTo(Long.class).one());
    }

    private long position(String name) {
        return positions.getOrDefault(name, -1L);
    }

    /**
     * The database is unreachable for many times the attempts allowed: every failure is the
     * database's (RETRYABLE), so nothing is rejected and nothing passed; once it is back, all apply.
     */
    @ParameterizedTest
    @EnumSource(OffsetStorage.class)
    void databaseOutageLongerThanTheAttemptLimitSkipsNothing(OffsetStorage storage) throws Exception {
        broker.send(topic, 0, records("r", 20));
        try (FaultRelay relay = new FaultRelay(InetAddress.getLoopbackAddress().getHostAddress(), 5432);
                JdbiInbox inbox = PostgresInbox.builder(db.postgresVia(relay.port())).tables(db.tables()).build()) {
            CountDownLatch firstApplied = new CountDownLatch(1);
            try (Running running = Running.start(builder(inbox, "a", Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5),
                    (tx, record) -> {
                        if (record.key().equals("r007")) {
                            firstApplied.countDown();
                        }
                    }).offsetStorage(storage).build())) {
                assertTrue(firstApplied.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the consumer applies");
                relay.goDown(); // in the middle of the batch r005..r009, most likely
                int before = relay.refused();
                Running.await(WAIT, () -> running.failure() != null || relay.refused() >= before + 10,
                        () -> "refused " + relay.refused());
                long stuckAt = position("a");
                assertTrue(stuckAt < 20, "the position moved while the database was away: " + stuckAt);
                assertEquals(List.of(), rejected);
                relay.comeUp();
                Running.await(WAIT, () -> running.failure() != null || position("a") >= 20,
                        () -> "position " + positions + ", failure " + running.failure());
                assertNull(running.failure());
            }
        }
        assertEquals(20, ledgerRows(), "each record applied once, none skipped");
        assertEquals(List.of(), rejected);
    }

    /**
     * With positions in the database, the database is away when the partition is assigned: the
     * consumer cannot know where to start, so it consumes nothing (Kafka's own offset may be ahead
     * of the database's) and asks again after the backoff, instead of ending {@code run()}.
     */
    @Test
    void databaseOutageWhilePartitionsAreAssignedWaitsForTheStoredPosition() throws Exception {
        broker.send(topic, 0, records("r", 20));
        try (FaultRelay relay = new FaultRelay(InetAddress.getLoopbackAddress().getHostAddress(), 5432);
                JdbiInbox inbox = PostgresInbox.builder(db.postgresVia(relay.port())).tables(db.tables()).build()) {
            db.jdbi().useHandle(h -> h.execute("INSERT INTO " + db.offsets() + " VALUES (?, ?, 0, 5)", group, topic));
            relay.goDown();
            try (Running running = Running.start(builder(inbox, "a", Map.of(), (tx, record) -> {})
                    .offsetStorage(OffsetStorage.DATABASE).build())) {
                Running.await(WAIT, () -> running.failure() != null || relay.refused() >= 15,
                        () -> "refused " + relay.refused());
                assertNull(running.failure(), () -> "run() ended with " + running.failure());
                assertEquals(0, ledgerRows(), "nothing applied while the position was unknown");
                relay.comeUp();
                Running.await(WAIT, () -> running.failure() != null || position("a") >= 20,
                        () -> "position " + positions + ", failure " + running.failure());
                assertNull(running.failure());
            }
        }
        assertEquals(15, ledgerRows(), "from the stored position 5 on, each once");
        assertEquals(List.of(), rejected);
    }

    /**
     * A batch stuck in its effect longer than max.poll.interval.ms: the group takes the partition
     * from A and gives it to B, which meets A's uncommitted claim and waits (busy, retried); when A
     * is let go and commits, B answers its records as duplicates. Nothing applies twice, nothing is
     * skipped, nothing is rejected.
     */
    @ParameterizedTest
    @EnumSource(OffsetStorage.class)
    void rebalanceWhileABatchIsStuckInItsEffectSkipsAndRepeatsNothing(OffsetStorage storage) throws Exception {
        broker.send(topic, 0, records("r", 30));
        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (JdbiInbox inboxA = db.inbox().busyTimeout(Duration.ofMillis(200)).build();
                JdbiInbox inboxB = db.inbox().busyTimeout(Duration.ofMillis(200)).build();
                Running a = Running.start(builder(inboxA, "a", Map.of(
                        ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 3_000,
                        ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10), (tx, record) -> {
                            if (record.key().equals("r015") && stuck.getCount() > 0) {
                                stuck.countDown();
                                if (!release.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                                    throw new IllegalStateException("never released");
                                }
                            }
                        }).offsetStorage(storage).build())) {
            assertTrue(stuck.await(WAIT.toSeconds(), TimeUnit.SECONDS), "A reached r015");
            try (Running b = Running.start(builder(inboxB, "b", Map.of(), (tx, record) -> {})
                    .offsetStorage(storage).build())) {
                // B holds the partition once A missed its poll deadline, and waits on A's claim of r010.
                Running.await(WAIT, () -> inboxB.stats().busy() >= 1 || b.failure() != null,
                        () -> "B busy " + inboxB.stats().busy() + ", positions " + positions);
                release.countDown();
                Running.await(WAIT, () -> a.failure() != null || b.failure() != null
                                || Math.max(position("a"), position("b")) >= 30 && ledgerRows() == 30,
                        () -> "positions " + positions + ", ledger " + ledgerRows());
                assertNull(a.failure());
                assertNull(b.failure());
            }
        } finally {
            release.countDown();
        }
        assertEquals(30, ledgerRows(), "each record applied once, none skipped");
        assertEquals(List.of(), rejected);
    }

    /**
     * A batch fails at COMMIT, and the record-by-record fallback outlives max.poll.interval.ms: the
     * group gives the partition to B, which applies everything and reports the conflict at the end.
     * A, evicted but still in its fallback, then commits each of its records alone (duplicates
     * now) and writes their positions. The stored position must not go back to A's: a consumer
     * that starts from it would apply nothing twice, but would report the conflict a second time.
     */
    @Test
    void evictedMemberFinishingItsFallbackNeverMovesTheStoredPositionBack() throws Exception {
        db.jdbi().useHandle(h -> {
            h.execute("CREATE TABLE shelf (id TEXT PRIMARY KEY)");
            h.execute("CREATE TABLE stock (id TEXT PRIMARY KEY, shelf TEXT NOT NULL"
                    + " REFERENCES shelf (id) DEFERRABLE INITIALLY DEFERRED)");
            h.execute("CREATE TABLE refused (id TEXT NOT NULL, kafka_offset BIGINT NOT NULL)");
        });
        List<Map.Entry<String, String>> sent = records("r", 20);
        sent.add(Map.entry("r003", "other")); // offset 20: a conflict
        broker.send(topic, 0, sent);
        AtomicBoolean orphanOnce = new AtomicBoolean(true);
        CountDownLatch aInFallback = new CountDownLatch(1);
        CountDownLatch letAGoOn = new CountDownLatch(1);
        KafkaInboxListener<Handle> reportConflicts = new KafkaInboxListener<>() {
            @Override
            public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record, Outcome.Conflict<?> conflict) {
                tx.execute("INSERT INTO refused (id, kafka_offset) VALUES (?, ?)", record.key(), record.offset());
            }
        };
        try (JdbiInbox inboxA = db.inbox().busyTimeout(Duration.ofMillis(200)).build();
                JdbiInbox inboxB = db.inbox().busyTimeout(Duration.ofMillis(200)).build()) {
            try (Running a = Running.start(builder(inboxA, "a", Map.of(
                            ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, 3_000,
                            ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10), (tx, record) -> {
                                if (record.key().equals("r005") && orphanOnce.compareAndSet(true, false)) {
                                    tx.execute("INSERT INTO stock (id, shelf) VALUES ('r005', 'nowhere')");
                                }
                            })
                    .offsetStorage(OffsetStorage.DATABASE)
                    .commitTimeout(Duration.ofSeconds(2))
                    .listener(new KafkaInboxListener<>() {
                        @Override
                        public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record,
                                Outcome.Conflict<?> conflict) {
                            reportConflicts.onConflict(tx, record, conflict);
                        }

                        @Override
                        public void onCommitted(TopicPartition partition, long nextOffset) {
                            positions.merge("a", nextOffset, Math::max);
                            if (nextOffset == 1 && aInFallback.getCount() > 0) {
                                aInFallback.countDown(); // r000 committed alone: the batch failed as a whole
                                try {
                                    letAGoOn.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            }
                        }
                    }).build())) {
                assertTrue(aInFallback.await(WAIT.toSeconds(), TimeUnit.SECONDS), "A applies r000 alone");
                try (Running b = Running.start(builder(inboxB, "b", Map.of(), (tx, record) -> {})
                        .offsetStorage(OffsetStorage.DATABASE).listener(new KafkaInboxListener<>() {
                            @Override
                            public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record,
                                    Outcome.Conflict<?> conflict) {
                                reportConflicts.onConflict(tx, record, conflict);
                            }

                            @Override
                            public void onCommitted(TopicPartition partition, long nextOffset) {
                                positions.merge("b", nextOffset, Math::max);
                            }
                        }).build())) {
                    Running.await(WAIT, () -> b.failure() != null || position("b") >= 21,
                            () -> "positions " + positions);
                    assertNull(b.failure());
                    letAGoOn.countDown();
                    // A goes on with r001..r009 alone, each now a duplicate, and writes their positions.
                    Running.await(WAIT, () -> a.failure() != null || position("a") >= 10,
                            () -> "positions " + positions);
                    assertNull(a.failure());
                }
            } finally {
                letAGoOn.countDown();
            }
            assertEquals(21L, storedPosition(), "the stored position went back");

            broker.send(topic, 0, List.of(Map.entry("r100", "1")));
            try (Running c = Running.start(builder(inboxA, "c", Map.of(), (tx, record) -> {})
                    .offsetStorage(OffsetStorage.DATABASE).listener(new KafkaInboxListener<>() {
                        @Override
                        public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record,
                                Outcome.Conflict<?> conflict) {
                            reportConflicts.onConflict(tx, record, conflict);
                        }

                        @Override
                        public void onCommitted(TopicPartition partition, long nextOffset) {
                            positions.merge("c", nextOffset, Math::max);
                        }
                    }).build())) {
                Running.await(WAIT, () -> c.failure() != null || position("c") >= 22, () -> "positions " + positions);
                assertNull(c.failure());
            }
        }
        assertEquals(21, ledgerRows(), "each record applied once, none skipped");
        assertEquals(1L, (long) db.jdbi().<Long, RuntimeException>withHandle(h -> h.createQuery("SELECT COUNT(*) FROM refused")
                .mapTo(Long.class).one()), "the conflict reported once");
    }

    /**
     * An application that stops its consumer from a listener (on the first rejection, say) calls
     * close() on the poll thread itself: run() must end after the batch, not wait on its own thread
     * for twice the commit timeout (from onRejected or onConflict, inside the batch's transaction).
     */
    @Test
    void closeFromAListenerOnThePollThreadEndsRunWithoutWaitingOnItself() throws Exception {
        broker.send(topic, 0, records("r", 3));
        AtomicReference<KafkaInboxConsumer<Handle>> self = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (JdbiInbox inbox = db.inbox().build()) {
            KafkaInboxConsumer<Handle> consumer = builder(inbox, "a", Map.of(), (tx, record) -> {})
                    .commitTimeout(Duration.ofSeconds(60))
                    .listener(new KafkaInboxListener<>() {
                        @Override
                        public void onCommitted(TopicPartition partition, long nextOffset) {
                            positions.merge("a", nextOffset, Math::max);
                            self.get().close();
                        }
                    }).build();
            self.set(consumer);
            Thread thread = new Thread(() -> {
                try {
                    consumer.run();
                } catch (Throwable t) {
                    failure.set(t);
                }
            }, "kafka-inbox-consumer");
            thread.start();
            thread.join(WAIT.toMillis() / 2);
            assertTrue(!thread.isAlive(), "run() still waits on its own close(); positions " + positions);
            assertNull(failure.get());
            assertEquals(3, position("a"));

            broker.send(topic, 0, List.of(Map.entry("r100", "1")));
            try (Running b = Running.start(builder(inbox, "b", Map.of(), (tx, record) -> {}).build())) {
                Running.await(WAIT, () -> b.failure() != null || position("b") >= 4, () -> "positions " + positions);
                assertNull(b.failure());
            }
        }
        assertEquals(4, ledgerRows());
    }

    private long storedPosition() {
        return db.jdbi().withHandle(h -> h.createQuery("SELECT next_offset FROM " + db.offsets()
                        + " WHERE consumer_group = ? AND topic = ? AND kafka_partition = 0")
                .bind(0, group).bind(1, topic).mapTo(Long.class).one());
    }

    /**
     * An effect that throws an {@link Error} (a failed assertion in the application's code): the
     * inbox rolls back and {@code run()} throws that very Error after closing the Kafka consumer;
     * the position stays before the record, so a new consumer meets it again.
     */
    @Test
    void errorFromAnEffectEndsRunWithItAndPassesNothing() throws Exception {
        broker.send(topic, 0, records("r", 3));
        try (JdbiInbox inbox = db.inbox().build()) {
            Throwable ended;
            try (Running running = Running.start(builder(inbox, "a", Map.of(), (tx, record) -> {
                if (record.key().equals("r001")) {
                    throw new AssertionError("shelf count went negative");
                }
            }).build())) {
                Running.await(WAIT, () -> running.failure() != null, () -> "run() did not end");
                ended = running.failure();
            }
            assertInstanceOf(AssertionError.class, ended);
            assertEquals("shelf count went negative", ended.getMessage());
            assertTrue(position("a") <= 1, "the position passed the record: " + positions);
            assertEquals(List.of(), rejected);

            try (Running again = Running.start(builder(inbox, "b", Map.of(), (tx, record) -> {}).build())) {
                Running.await(WAIT, () -> again.failure() != null || position("b") >= 3, () -> "positions " + positions);
                assertNull(again.failure());
            }
        }
        assertEquals(3, ledgerRows());
    }
}
