package dev.idempotent.inbox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link OffsetStorage#DATABASE} on each database the inbox supports, against a real broker: the
 * table comes from the inbox's schema step, never from the consumer, and its positions belong to
 * exactly one group, topic and partition.
 */
class DatabaseOffsetsTest {

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

    private static Map<String, Object> config(String group) {
        return Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    }

    private static long stored(Handle h, String table, String group, String topic) {
        return h.createQuery("SELECT next_offset FROM " + table
                        + " WHERE consumer_group = ? AND topic = ? AND kafka_partition = 0")
                .bind(0, group).bind(1, topic).mapTo(Long.class).findOne().orElse(-1L);
    }

    /**
     * The consumer starts at its own group's stored position, and rows of a group or topic that
     * differs only in case or in a trailing space are other rows: Kafka's names are case-sensitive.
     */
    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void consumerResumesAtItsOwnGroupsPositionAndNoOther(TestDatabase.Kind kind) throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String group = "warehouse-" + suffix;
        String topic = "receipts-" + suffix;
        broker.createTopic(topic, 1);
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("b", "2"), Map.entry("c", "3"),
                Map.entry("d", "4")));
        try (TestDatabase db = TestDatabase.create(kind, dbDir);
                JdbiInbox inbox = db.inbox().build()) {
            db.jdbi().useHandle(h -> {
                h.execute("CREATE TABLE applied (id VARCHAR(20) NOT NULL PRIMARY KEY)");
                String insert = "INSERT INTO " + db.offsets() + " (consumer_group, topic, kafka_partition, next_offset)"
                        + " VALUES (?, ?, 0, ?)";
                h.execute(insert, "Warehouse-" + suffix, topic, 1000);
                h.execute(insert, group + " ", topic, 1000);
                h.execute(insert, group, "Receipts-" + suffix, 1000);
                h.execute(insert, group, topic, 1); // its own: "a" was consumed before
            });

            try (Running running = Running.start(KafkaInboxConsumer.builder(inbox, config(group),
                            (Handle tx, org.apache.kafka.clients.consumer.ConsumerRecord<String, byte[]> record) ->
                                    tx.execute("INSERT INTO applied (id) VALUES (?)", record.key()))
                    .topics(topic)
                    .offsetStorage(OffsetStorage.DATABASE)
                    .retryBackoff(Duration.ofMillis(50))
                    .build())) {
                Running.await(WAIT, () -> running.failure() != null
                                || db.jdbi().withHandle(h -> stored(h, db.offsets(), group, topic)) >= 4,
                        () -> "stored " + db.jdbi().withHandle(h -> stored(h, db.offsets(), group, topic)));
                assertNull(running.failure(), () -> "run() ended with " + running.failure());
            }

            db.jdbi().useHandle(h -> {
                assertEquals(List.of("b", "c", "d"), h.createQuery("SELECT id FROM applied ORDER BY id")
                        .mapTo(String.class).list(), "from the group's own position on");
                assertEquals(4, stored(h, db.offsets(), group, topic));
                assertEquals(1000, stored(h, db.offsets(), "Warehouse-" + suffix, topic), "another group's row is untouched");
                assertEquals(1000, stored(h, db.offsets(), group + " ", topic), "another group's row is untouched");
                assertEquals(1000, stored(h, db.offsets(), group, "Receipts-" + suffix), "another topic's row is untouched");
                assertEquals(4, (long) h.createQuery("SELECT COUNT(*) FROM " + db.offsets())
                        .mapTo(Long.class).one());
            });
        }
    }

    /**
     * The table's key compares exactly: a group or topic that differs only in case, accent or a
     * trailing space has a position of its own. (MariaDB's default collation made them one key.)
     */
    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void storedPositionsCompareGroupAndTopicExactly(TestDatabase.Kind kind) {
        TopicPartition receipts = new TopicPartition("receipts", 0);
        try (TestDatabase db = TestDatabase.create(kind, dbDir);
                JdbiInbox inbox = db.inbox().build()) {
            DatabaseOffsets warehouse = new DatabaseOffsets("warehouse", db.tables());
            db.jdbi().useTransaction(h -> warehouse.read(h, List.of(receipts)));
            db.jdbi().useTransaction(h -> {
                new DatabaseOffsets("Warehouse", db.tables()).write(h, receipts, 1000);
                new DatabaseOffsets("warehouse ", db.tables()).write(h, receipts, 2000);
                new DatabaseOffsets("wárehouse", db.tables()).write(h, receipts, 3000);
                warehouse.write(h, new TopicPartition("Receipts", 0), 4000);
            });
            assertEquals(Map.of(), db.jdbi().withHandle(h -> warehouse.read(h, List.of(receipts))),
                    "group warehouse has no position on receipts yet");
            db.jdbi().useTransaction(h -> warehouse.write(h, receipts, 7));
            assertEquals(Map.of(receipts, 7L), db.jdbi().withHandle(h -> warehouse.read(h, List.of(receipts))));
            assertEquals(Map.of(receipts, 1000L),
                    db.jdbi().withHandle(h -> new DatabaseOffsets("Warehouse", db.tables()).read(h, List.of(receipts))));
            assertEquals(5, (long) db.jdbi().withHandle(h -> h.createQuery("SELECT COUNT(*) FROM " + db.offsets())
                    .mapTo(Long.class).one()));
        }
    }

    /**
     * A stored position only moves forward: a member the group evicted while it still committed
     * what it held writes a position behind the new owner's, which must stand.
     */
    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void storedPositionNeverMovesBack(TestDatabase.Kind kind) {
        TopicPartition receipts = new TopicPartition("receipts", 0);
        try (TestDatabase db = TestDatabase.create(kind, dbDir);
                JdbiInbox inbox = db.inbox().build()) {
            DatabaseOffsets warehouse = new DatabaseOffsets("warehouse", db.tables());
            db.jdbi().useTransaction(h -> warehouse.write(h, receipts, 21));
            db.jdbi().useTransaction(h -> warehouse.write(h, receipts, 10));
            assertEquals(Map.of(receipts, 21L), db.jdbi().withHandle(h -> warehouse.read(h, List.of(receipts))));
            db.jdbi().useTransaction(h -> warehouse.write(h, receipts, 22));
            assertEquals(Map.of(receipts, 22L), db.jdbi().withHandle(h -> warehouse.read(h, List.of(receipts))));
        }
    }

    /**
     * A schema of version 1 (its migration V0_1 only), holding the table the consumer of version
     * 0.1 created by itself, is brought up by migration 0.2 (on the default names, where that
     * consumer had its table): on MariaDB, where that table compared
     * case-insensitively, the consumer refuses it until then; its rows are kept.
     */
    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void migration02BringsAnEarlierConsumersTableToExactKeys(TestDatabase.Kind kind) throws Exception {
        TopicPartition receipts = new TopicPartition("receipts", 0);
        DatabaseOffsets warehouse = new DatabaseOffsets("warehouse", InboxTables.defaults());
        try (TestDatabase db = TestDatabase.withDefaultNames(kind, dbDir)) {
            db.inbox().build().close();
            db.jdbi().useHandle(h -> {
                h.execute("DROP TABLE inbox_kafka_offset");
                h.execute("DELETE FROM inbox_schema WHERE component = 'kafka_offset'");
                // What the consumer of version 0.1 created by itself.
                h.execute("""
                        CREATE TABLE IF NOT EXISTS inbox_kafka_offset (
                            consumer_group VARCHAR(255) NOT NULL,
                            topic VARCHAR(255) NOT NULL,
                            kafka_partition INTEGER NOT NULL,
                            next_offset BIGINT NOT NULL,
                            PRIMARY KEY (consumer_group, topic, kafka_partition))""");
                h.execute("INSERT INTO inbox_kafka_offset VALUES ('Warehouse', 'receipts', 0, 1000)");
            });
            if (kind == TestDatabase.Kind.MARIADB) {
                InboxStorageException refused = assertThrows(
                        InboxStorageException.class,
                        () -> db.jdbi().useHandle(warehouse::requireTable));
                assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, refused.kind());
                assertTrue(refused.getMessage().contains("case-insensitively")
                        && refused.getMessage().contains("V0_2__kafka_offset"), refused.getMessage());
            }

            String folder = kind == TestDatabase.Kind.POSTGRES ? "postgres" : kind.name().toLowerCase(java.util.Locale.ROOT);
            String script;
            try (java.io.InputStream in = DatabaseOffsetsTest.class.getClassLoader().getResourceAsStream(
                    "dev/idempotent/inbox/" + folder + "/flyway/V0_2__kafka_offset.sql")) {
                script = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
            db.jdbi().useHandle(h -> h.createScript(script).execute());

            db.jdbi().useHandle(warehouse::requireTable);
            assertEquals(Map.of(), db.jdbi().withHandle(h -> warehouse.read(h, List.of(receipts))));
            db.jdbi().useTransaction(h -> warehouse.write(h, receipts, 7));
            assertEquals(Map.of(receipts, 7L), db.jdbi().withHandle(h -> warehouse.read(h, List.of(receipts))));
            assertEquals(Map.of(receipts, 1000L),
                    db.jdbi().withHandle(h -> new DatabaseOffsets("Warehouse", InboxTables.defaults()).read(h, List.of(receipts))));
            assertEquals(List.of("inbox=1", "kafka_offset=1"), db.jdbi().withHandle(h -> h.createQuery(
                    "SELECT component, version FROM inbox_schema ORDER BY component")
                    .map((rs, ctx) -> rs.getString(1) + "=" + rs.getInt(2)).list()));
        }
    }

    /**
     * With the table missing (a schema made by an older migration, and the inbox built with schema
     * mode VALIDATE), the consumer runs no DDL: {@code run()} refuses at once, naming the inbox's
     * table, the migration in the templates' Flyway location with the inbox's prefix, and the
     * prefixed Liquibase changelog, and creates nothing.
     */
    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void missingTableIsRefusedNamingTheMigrationAndNothingIsCreated(TestDatabase.Kind kind) throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String topic = "receipts-" + suffix;
        broker.createTopic(topic, 1);
        broker.send(topic, 0, List.of(Map.entry("a", "1")));
        try (TestDatabase db = TestDatabase.create(kind, dbDir)) {
            db.inbox().build().close();
            db.jdbi().useHandle(h -> h.execute("DROP TABLE " + db.offsets()));
            try (JdbiInbox inbox = db.inbox().schema(SchemaMode.VALIDATE).build()) {
                KafkaInboxConsumer<Handle> consumer = KafkaInboxConsumer.builder(inbox, config("warehouse-" + suffix),
                                (Handle tx, org.apache.kafka.clients.consumer.ConsumerRecord<String, byte[]> r) -> {})
                        .topics(topic)
                        .offsetStorage(OffsetStorage.DATABASE)
                        .build();
                Throwable refused;
                try (Running running = Running.start(consumer)) {
                    Running.await(WAIT, () -> running.failure() != null, () -> "run() did not end");
                    refused = running.failure();
                }
                InboxStorageException storage = assertInstanceOf(InboxStorageException.class, refused,
                        () -> "refused with " + refused);
                assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, storage.kind());
                String message = storage.getMessage();
                assertTrue(message.startsWith("table " + db.offsets() + ", where OffsetStorage.DATABASE keeps positions,"
                        + " is missing"), message);
                assertTrue(message.contains("V0_2__kafka_offset.sql")
                        && message.contains("classpath:dev/idempotent/inbox/<database>/flyway-prefixed with placeholder"
                                + " inbox_table_prefix=" + TestDatabase.PREFIX)
                        && message.contains("inbox-kafka-offset-1")
                        && message.contains("inbox-changelog-prefixed.xml"), message);
                assertFalse(message.contains("inbox/<database>/flyway,"), "no default-name location for a prefix: " + message);
            }
            assertEquals(List.of(), offsetTables(db), "the consumer created no table");
        }
    }

    /** Every table whose name ends in kafka_offset in the test's database and in the inbox's schema. */
    private static List<String> offsetTables(TestDatabase db) {
        String schema = db.tables().schema().orElse(null);
        return db.jdbi().withHandle(h -> h.createQuery(switch (db.kind()) {
            case SQLITE -> "SELECT name FROM sqlite_master WHERE name LIKE '%kafka_offset' AND :schema IS NULL";
            case POSTGRES -> "SELECT tablename FROM pg_tables WHERE tablename LIKE '%kafka_offset'"
                    + " AND schemaname IN (current_schema(), COALESCE(:schema, current_schema()))";
            case MARIADB -> "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME LIKE '%kafka_offset'"
                    + " AND TABLE_SCHEMA IN (DATABASE(), COALESCE(:schema, DATABASE()))";
        }).bind("schema", schema).mapTo(String.class).list());
    }

    /**
     * On the default names the refusal names the migration in both Flyway locations (the default
     * names' and the templates' with prefix inbox_) and the Liquibase change set.
     */
    @Test
    void missingTableOnTheDefaultNamesNamesBothFlywayLocations() {
        try (TestDatabase db = TestDatabase.withDefaultNames(TestDatabase.Kind.SQLITE, dbDir)) {
            db.inbox().build().close();
            db.jdbi().useHandle(h -> h.execute("DROP TABLE inbox_kafka_offset"));
            InboxStorageException refused = assertThrows(InboxStorageException.class,
                    () -> db.jdbi().useHandle(new DatabaseOffsets("warehouse", InboxTables.defaults())::requireTable));
            assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, refused.kind());
            assertEquals("table inbox_kafka_offset, where OffsetStorage.DATABASE keeps positions, is missing; run the"
                    + " inbox's migration V0_2__kafka_offset.sql (Flyway location"
                    + " classpath:dev/idempotent/inbox/<database>/flyway, or"
                    + " classpath:dev/idempotent/inbox/<database>/flyway-prefixed with placeholder"
                    + " inbox_table_prefix=inbox_; or change set inbox-kafka-offset-1 of the inbox's Liquibase changelog,"
                    + " liquibase/inbox-changelog.xml)", refused.getMessage());
        }
    }

    /**
     * Two inboxes on different prefixes in one database (on PostgreSQL and MariaDB in one schema
     * of their own), each with a consumer keeping its positions in the database: each consumer
     * starts at the position in its own inbox's table, writes only there, and a row of the same
     * group in the other table is never read.
     */
    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void consumersOfInboxesOnDifferentPrefixesKeepTheirOwnPositions(TestDatabase.Kind kind) throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String topic = "receipts-" + suffix;
        String groupA = "warehouse-" + suffix;
        String groupB = "billing-" + suffix;
        broker.createTopic(topic, 1);
        broker.send(topic, 0, List.of(Map.entry("a", "1"), Map.entry("b", "2"), Map.entry("c", "3"),
                Map.entry("d", "4"), Map.entry("e", "5"), Map.entry("f", "6")));
        try (TestDatabase db = TestDatabase.create(kind, dbDir)) {
            InboxTables tablesA = db.tables();
            InboxTables tablesB = db.tables().schema().map(InboxTables.prefix("ku_")::inSchema)
                    .orElse(InboxTables.prefix("ku_"));
            try (JdbiInbox inboxA = db.inbox().build();
                    JdbiInbox inboxB = db.inbox().tables(tablesB).build()) {
                assertEquals(tablesA, inboxA.tables());
                assertEquals(tablesB, inboxB.tables());
                String insert = " (consumer_group, topic, kafka_partition, next_offset) VALUES (?, ?, 0, ?)";
                db.jdbi().useHandle(h -> {
                    h.execute("CREATE TABLE applied_a (id VARCHAR(20) NOT NULL PRIMARY KEY)");
                    h.execute("CREATE TABLE applied_b (id VARCHAR(20) NOT NULL PRIMARY KEY)");
                    h.execute("INSERT INTO " + tablesA.kafkaOffsetTable() + insert, groupA, topic, 1);
                    h.execute("INSERT INTO " + tablesB.kafkaOffsetTable() + insert, groupB, topic, 3);
                    // Group A's position in the other inbox's table: never A's.
                    h.execute("INSERT INTO " + tablesB.kafkaOffsetTable() + insert, groupA, topic, 5);
                });

                try (Running a = Running.start(consumer(inboxA, groupA, topic, "applied_a"));
                        Running b = Running.start(consumer(inboxB, groupB, topic, "applied_b"))) {
                    Running.await(WAIT, () -> a.failure() != null || b.failure() != null
                                    || db.jdbi().withHandle(h -> stored(h, tablesA.kafkaOffsetTable(), groupA, topic) >= 6
                                            && stored(h, tablesB.kafkaOffsetTable(), groupB, topic) >= 6),
                            () -> "positions " + db.jdbi().withHandle(h -> rows(h, tablesA) + " " + rows(h, tablesB)));
                    assertNull(a.failure(), () -> "run() of A ended with " + a.failure());
                    assertNull(b.failure(), () -> "run() of B ended with " + b.failure());
                }

                db.jdbi().useHandle(h -> {
                    assertEquals(List.of("b", "c", "d", "e", "f"), h.createQuery("SELECT id FROM applied_a ORDER BY id")
                            .mapTo(String.class).list(), "A from its own position, 1, on");
                    assertEquals(List.of("d", "e", "f"), h.createQuery("SELECT id FROM applied_b ORDER BY id")
                            .mapTo(String.class).list(), "B from its own position, 3, on");
                    assertEquals(List.of(groupA + "=6"), rows(h, tablesA), "A's table holds A's position only");
                    assertEquals(List.of(groupA + "=5", groupB + "=6").stream().sorted().toList(), rows(h, tablesB),
                            "B's table holds B's position, and group A's row there is untouched");
                });
            }
        }
    }

    private static KafkaInboxConsumer<Handle> consumer(JdbiInbox inbox, String group, String topic, String applied) {
        return KafkaInboxConsumer.builder(inbox, config(group),
                        (Handle tx, org.apache.kafka.clients.consumer.ConsumerRecord<String, byte[]> record) ->
                                tx.execute("INSERT INTO " + applied + " (id) VALUES (?)", record.key()))
                .topics(topic)
                .offsetStorage(OffsetStorage.DATABASE)
                .retryBackoff(Duration.ofMillis(50))
                .build();
    }

    private static List<String> rows(Handle h, InboxTables tables) {
        return h.createQuery("SELECT consumer_group, next_offset FROM " + tables.kafkaOffsetTable()
                        + " ORDER BY consumer_group")
                .map((rs, ctx) -> rs.getString(1) + "=" + rs.getLong(2)).list();
    }
}
