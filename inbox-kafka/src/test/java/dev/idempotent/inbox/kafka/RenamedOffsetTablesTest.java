package dev.idempotent.inbox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link OffsetStorage#DATABASE} on renamed tables ({@code kt_}, on PostgreSQL and MariaDB in a
 * schema of their own) against a real broker: the positions are read and written in the inbox's
 * table only, whatever the connection's search_path finds first, and a consumer restarted on the
 * same prefix resumes at its stored position.
 */
class RenamedOffsetTablesTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

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

    private static KafkaInboxConsumer<Handle> consumer(JdbiInbox inbox, String group, String topic) {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return KafkaInboxConsumer.builder(inbox, config,
                        (Handle tx, ConsumerRecord<String, byte[]> record) ->
                                tx.execute("INSERT INTO applied (id) VALUES (?)", record.key()))
                .topics(topic)
                .offsetStorage(OffsetStorage.DATABASE)
                .retryBackoff(Duration.ofMillis(50))
                .build();
    }

    private static long stored(Handle h, String table, String group, String topic) {
        return h.createQuery("SELECT next_offset FROM " + table
                        + " WHERE consumer_group = ? AND topic = ? AND kafka_partition = 0")
                .bind(0, group).bind(1, topic).mapTo(Long.class).findOne().orElse(-1L);
    }

    private static List<String> applied(Handle h) {
        return h.createQuery("SELECT id FROM applied ORDER BY id").mapTo(String.class).list();
    }

    /**
     * The inbox's tables are in schema A; the connection's search_path is schema B, which holds a
     * {@code kt_kafka_offset} and an {@code inbox_kafka_offset} with a position of the same group
     * and topic. The consumer starts at A's position and writes only there.
     */
    @Test
    void aPositionInTheSearchPathsSchemaIsNeverTheInboxs() throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String group = "warehouse-" + suffix;
        String topic = "receipts-" + suffix;
        broker.createTopic(topic, 1);
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("b", "2"), Map.entry("c", "3"),
                Map.entry("d", "4")));
        try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.POSTGRES, dbDir);
                JdbiInbox inbox = db.inbox().build()) {
            String own = db.offsets();
            assertEquals(db.tables().schema().orElseThrow() + ".kt_kafka_offset", own);
            db.jdbi().useHandle(h -> {
                h.execute("CREATE TABLE applied (id VARCHAR(20) NOT NULL PRIMARY KEY)");
                for (String decoy : List.of("kt_kafka_offset", "inbox_kafka_offset")) {
                    // Unqualified: in the search_path's schema, not the inbox's.
                    h.execute("CREATE TABLE " + decoy + " (consumer_group VARCHAR(255) NOT NULL, topic VARCHAR(255)"
                            + " NOT NULL, kafka_partition INTEGER NOT NULL, next_offset BIGINT NOT NULL,"
                            + " PRIMARY KEY (consumer_group, topic, kafka_partition))");
                    h.execute("INSERT INTO " + decoy + " VALUES (?, ?, 0, 3)", group, topic);
                }
                h.execute("INSERT INTO " + own + " (consumer_group, topic, kafka_partition, next_offset)"
                        + " VALUES (?, ?, 0, 1)", group, topic);
            });

            try (Running running = Running.start(consumer(inbox, group, topic))) {
                Running.await(WAIT, () -> running.failure() != null
                                || db.jdbi().withHandle(h -> stored(h, own, group, topic)) >= 4,
                        () -> "stored " + db.jdbi().withHandle(h -> stored(h, own, group, topic)));
                assertNull(running.failure(), () -> "run() ended with " + running.failure());
            }

            db.jdbi().useHandle(h -> {
                assertEquals(List.of("b", "c", "d"), applied(h), "from the inbox's own position, 1, on");
                assertEquals(4, stored(h, own, group, topic));
                assertEquals(3, stored(h, "kt_kafka_offset", group, topic), "the search_path's table is untouched");
                assertEquals(3, stored(h, "inbox_kafka_offset", group, topic), "the default-named table is untouched");
            });
        }
    }

    /**
     * A consumer stopped and another started on a new inbox of the same prefix and group resumes
     * at the stored position: it decides no record the first one committed (no duplicate).
     */
    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void aConsumerRestartedOnTheSamePrefixResumesAtItsStoredPosition(TestDatabase.Kind kind) throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String group = "warehouse-" + suffix;
        String topic = "receipts-" + suffix;
        broker.createTopic(topic, 1);
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("b", "2"), Map.entry("c", "3")));
        try (TestDatabase db = TestDatabase.create(kind, dbDir)) {
            String own = db.offsets();
            db.jdbi().useHandle(h -> h.execute("CREATE TABLE applied (id VARCHAR(20) NOT NULL PRIMARY KEY)"));
            try (JdbiInbox first = db.inbox().build();
                    Running running = Running.start(consumer(first, group, topic))) {
                Running.await(WAIT, () -> running.failure() != null
                                || db.jdbi().withHandle(h -> stored(h, own, group, topic)) >= 3,
                        () -> "stored " + db.jdbi().withHandle(h -> stored(h, own, group, topic)));
                assertNull(running.failure(), () -> "run() ended with " + running.failure());
            }

            broker.send(topic, 0, List.of(Map.entry("d", "4"), Map.entry("e", "5")));
            try (JdbiInbox second = db.inbox().build()) {
                try (Running running = Running.start(consumer(second, group, topic))) {
                    Running.await(WAIT, () -> running.failure() != null
                                    || db.jdbi().withHandle(h -> stored(h, own, group, topic)) >= 5,
                            () -> "stored " + db.jdbi().withHandle(h -> stored(h, own, group, topic)));
                    assertNull(running.failure(), () -> "run() ended with " + running.failure());
                }
                assertEquals(2, second.stats().applied(), "d and e");
                assertEquals(0, second.stats().duplicates(), "nothing before the stored position was read again");
            }
            db.jdbi().useHandle(h -> assertEquals(List.of("a", "b", "c", "d", "e"), applied(h)));
        }
    }
}
