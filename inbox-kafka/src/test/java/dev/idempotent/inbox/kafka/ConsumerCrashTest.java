package dev.idempotent.inbox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Consumer JVMs killed with {@code destroyForcibly} in the middle of a stream of 2,000 receipts (a
 * fifth of them resent, some of those with other content), then restarted: the ledger ends as if
 * each id had been applied once, in the order sent, and every conflict is reported.
 */
class ConsumerCrashTest {

    private static final int RECEIPTS = 2_000;
    private static final int PARTITIONS = 3;
    private static final Duration WAIT = Duration.ofSeconds(90);

    @TempDir
    static Path dir;

    static KafkaBroker broker;

    @BeforeAll
    static void startBroker() {
        broker = KafkaBroker.start(dir.resolve("broker"));
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    static List<Arguments> runs() {
        List<Arguments> runs = new ArrayList<>();
        for (OffsetStorage storage : OffsetStorage.values()) {
            for (int run = 1; run <= 3; run++) {
                runs.add(Arguments.of(storage, run));
            }
        }
        return runs;
    }

    @ParameterizedTest(name = "{0} run {1}")
    @MethodSource("runs")
    void consumerKilledMidStreamAndRestartedAppliesEachIdOnce(OffsetStorage storage, int run) throws Exception {
        Path db = Files.createTempDirectory(dir, "sqlite").resolve("ledger.db");
        Jdbi jdbi = Jdbi.create("jdbc:sqlite:" + db);
        jdbi.useHandle(h -> ConsumerProcess.LEDGER.forEach(h::execute));
        Stream stream = new Stream(run, "sqlite:" + db, jdbi, storage);
        Random random = new Random(run * 7919L + storage.ordinal());

        try {
            Process first = stream.startConsumer("first");
            Thread producer = stream.produceInBackground();
            int killAt = 300 + random.nextInt(900);
            Running.await(WAIT, () -> stream.appliedRows() >= killAt || !first.isAlive(), () -> "applied " + stream.appliedRows());
            assertTrue(first.isAlive(), "the consumer was running when killed");
            first.destroyForcibly().waitFor();

            stream.checkNothingSkipped(true);
            stream.startConsumer("second");
            producer.join(WAIT.toMillis());
            stream.awaitAllConsumed();
        } finally {
            stream.killConsumers();
        }
        stream.checkLedger();
    }

    @ParameterizedTest(name = "{0} run {1}")
    @MethodSource("runs")
    void oneOfTwoInstancesKilledDuringARebalanceOverPostgres(OffsetStorage storage, int run) throws Exception {
        String schema = "kafka_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        Jdbi admin = Jdbi.create(ConsumerProcess.postgresUrl("public"));
        admin.useHandle(h -> h.execute("CREATE SCHEMA " + schema));
        try {
            Jdbi jdbi = Jdbi.create(ConsumerProcess.postgresUrl(schema));
            jdbi.useHandle(h -> ConsumerProcess.LEDGER.forEach(h::execute));
            // The instances would race to create the inbox's and the positions' tables otherwise.
            try (var inbox = dev.idempotent.inbox.postgres.PostgresInbox.builder(jdbi).tables(ConsumerProcess.TABLES).build()) {
                inbox.find("warm-up");
            }
            Stream stream = new Stream(run + 10, "postgres:" + schema, jdbi, storage);
            Random random = new Random(run * 104729L + storage.ordinal());

            try {
                Process a = stream.startConsumer("a");
                Thread producer = stream.produceInBackground();
                Running.await(WAIT, () -> stream.appliedRows() >= 200, () -> "applied " + stream.appliedRows());
                stream.startConsumer("b");
                Path bLog = dir.resolve(stream.topic + "-b.log");
                Running.await(WAIT, () -> logSays(bLog, "consuming"), () -> "b did not start");
                // B's join makes the group rebalance; A is killed while that is under way or just done.
                // Capped below the stream's distinct ids, so that A dies before the stream is drained.
                int killAt = Math.min(stream.appliedRows() + 50 + random.nextInt(300), stream.distinctIds() - 100);
                Running.await(WAIT, () -> stream.appliedRows() >= killAt, () -> "applied " + stream.appliedRows());
                a.destroyForcibly().waitFor();
                producer.join(WAIT.toMillis());
                stream.awaitAllConsumed();
            } finally {
                stream.killConsumers();
            }
            stream.checkLedger();
        } finally {
            admin.useHandle(h -> h.execute("DROP SCHEMA " + schema + " CASCADE"));
        }
    }

    private static boolean logSays(Path log, String text) {
        try {
            return Files.exists(log) && new String(Files.readAllBytes(log), StandardCharsets.ISO_8859_1).contains(text);
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** One run: a topic, a group, the receipts sent, and the checks on the ledger. */
    private static final class Stream {

        private final String topic = "receipts-" + UUID.randomUUID();
        private final String group = "warehouse-" + UUID.randomUUID();
        private final String database;
        private final Jdbi jdbi;
        private final OffsetStorage storage;
        private final List<Map.Entry<String, Integer>> receipts = new ArrayList<>();
        /** Where each receipt landed, in send order, once acknowledged. */
        private final List<Sent> sent = new ArrayList<>();
        private final AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        private final List<Process> consumers = new ArrayList<>();

        Stream(int seed, String database, Jdbi jdbi, OffsetStorage storage) {
            this.database = database;
            this.jdbi = jdbi;
            this.storage = storage;
            broker.createTopic(topic, PARTITIONS);
            Random random = new Random(seed);
            List<Map.Entry<String, Integer>> firsts = new ArrayList<>();
            while (receipts.size() < RECEIPTS) {
                if (!firsts.isEmpty() && random.nextInt(5) == 0) { // a fifth are resends
                    Map.Entry<String, Integer> original = firsts.get(random.nextInt(firsts.size()));
                    boolean conflicting = random.nextInt(10) == 0;
                    receipts.add(Map.entry(original.getKey(), original.getValue() + (conflicting ? 100 : 0)));
                } else {
                    Map.Entry<String, Integer> receipt = Map.entry("r" + seed + "-" + firsts.size(), 1 + random.nextInt(9));
                    firsts.add(receipt);
                    receipts.add(receipt);
                }
            }
        }

        Process startConsumer(String name) {
            Process process = ConsumerProcess.start(dir.resolve(topic + "-" + name + ".log"),
                    broker.bootstrap(), topic, group, database, storage.name());
            consumers.add(process);
            return process;
        }

        /** Kills every consumer JVM of this run that is still alive, whatever the test's outcome. */
        void killConsumers() throws InterruptedException {
            for (Process process : consumers) {
                process.destroyForcibly().waitFor();
            }
        }

        /** Sends the receipts in chunks while the consumers run, so a kill lands mid-stream. */
        Thread produceInBackground() {
            Thread thread = new Thread(() -> {
                try (KafkaProducer<String, byte[]> producer = broker.producer()) {
                    for (int from = 0; from < receipts.size(); from += 100) {
                        List<java.util.concurrent.Future<RecordMetadata>> chunk = new ArrayList<>();
                        for (Map.Entry<String, Integer> receipt : receipts.subList(from, Math.min(from + 100, receipts.size()))) {
                            chunk.add(producer.send(new ProducerRecord<>(topic, receipt.getKey(),
                                    receipt.getValue().toString().getBytes(StandardCharsets.UTF_8))));
                        }
                        for (int i = 0; i < chunk.size(); i++) {
                            RecordMetadata metadata = chunk.get(i).get(30, TimeUnit.SECONDS);
                            Map.Entry<String, Integer> receipt = receipts.get(from + i);
                            synchronized (sent) {
                                sent.add(new Sent(receipt.getKey(), receipt.getValue(),
                                        new TopicPartition(topic, metadata.partition()), metadata.offset()));
                            }
                        }
                    }
                } catch (Throwable t) {
                    producerFailure.set(t);
                }
            }, "receipt-producer");
            thread.start();
            return thread;
        }

        int distinctIds() {
            return (int) receipts.stream().map(Map.Entry::getKey).distinct().count();
        }

        int appliedRows() {
            return jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM applied").mapTo(Integer.class).one());
        }

        /** The committed positions: Kafka's, or the database's with {@link OffsetStorage#DATABASE}. */
        Map<TopicPartition, Long> positions() throws Exception {
            Map<TopicPartition, Long> positions = new HashMap<>();
            if (storage == OffsetStorage.DATABASE) {
                try {
                    jdbi.useHandle(h -> h.createQuery(
                                    "SELECT topic, kafka_partition, next_offset FROM " + ConsumerProcess.TABLES.kafkaOffsetTable()
                                            + " WHERE consumer_group = ?")
                            .bind(0, group)
                            .map((rs, ctx) -> Map.entry(new TopicPartition(rs.getString(1), rs.getInt(2)), rs.getLong(3)))
                            .forEach(e -> positions.put(e.getKey(), e.getValue())));
                } catch (RuntimeException noTableYet) {
                    // created on the first assignment
                }
                return positions;
            }
            try (Admin admin = broker.admin()) {
                Map<TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                committed.forEach((partition, offset) -> {
                    if (offset != null) {
                        positions.put(partition, offset.offset());
                    }
                });
            } catch (ExecutionException e) {
                throw new AssertionError(e);
            }
            return positions;
        }

        /** Right after a kill: every first receipt before a committed position was applied. */
        void checkNothingSkipped(boolean killed) throws Exception {
            Map<TopicPartition, Long> positions = positions();
            Map<String, Applied> applied = applied();
            List<Sent> acknowledged;
            synchronized (sent) {
                acknowledged = List.copyOf(sent);
            }
            Set<String> seen = new HashSet<>();
            for (Sent receipt : acknowledged) {
                if (seen.add(receipt.id()) && receipt.offset() < positions.getOrDefault(receipt.partition(), 0L)) {
                    assertTrue(applied.containsKey(receipt.id()),
                            receipt + " is before the committed position " + positions + " but was not applied");
                }
            }
            if (killed && storage == OffsetStorage.DATABASE) {
                for (Applied row : applied.values()) {
                    assertTrue(row.offset() < positions.getOrDefault(row.partition(), 0L),
                            row + " committed without its position " + positions);
                }
            }
        }

        void awaitAllConsumed() throws Exception {
            Running.await(WAIT, () -> producerFailure.get() != null || sent.size() == RECEIPTS,
                    () -> "sent " + sent.size());
            assertEquals(null, producerFailure.get(), "the producer failed");
            Map<TopicPartition, Long> ends = new HashMap<>();
            for (Sent receipt : sent) {
                ends.merge(receipt.partition(), receipt.offset() + 1, Math::max);
            }
            Running.await(WAIT, () -> {
                try {
                    Map<TopicPartition, Long> positions = positions();
                    return ends.entrySet().stream().allMatch(e -> positions.getOrDefault(e.getKey(), 0L) >= e.getValue());
                } catch (Exception e) {
                    return false;
                }
            }, () -> {
                try {
                    return "positions " + positions() + ", ends " + ends;
                } catch (Exception e) {
                    return e.toString();
                }
            });
        }

        Map<String, Applied> applied() {
            Map<String, Applied> applied = new HashMap<>();
            jdbi.useHandle(h -> h.createQuery("SELECT id, qty, kafka_partition, record_offset FROM applied")
                    .map((rs, ctx) -> new Applied(rs.getString(1), rs.getInt(2),
                            new TopicPartition(topic, rs.getInt(3)), rs.getLong(4)))
                    .forEach(row -> {
                        Applied twice = applied.put(row.id(), row);
                        if (twice != null) {
                            throw new AssertionError("applied twice: " + twice + " and " + row);
                        }
                    }));
            return applied;
        }

        void checkLedger() throws Exception {
            checkNothingSkipped(false);
            Map<String, Applied> applied = applied();
            Map<String, Sent> firsts = new LinkedHashMap<>();
            Set<List<Object>> expectedConflicts = new HashSet<>();
            for (Sent receipt : sent) {
                Sent first = firsts.putIfAbsent(receipt.id(), receipt);
                if (first != null && first.qty() != receipt.qty()) {
                    expectedConflicts.add(List.of(receipt.id(), receipt.partition().partition(), receipt.offset()));
                }
            }
            assertEquals(firsts.keySet(), applied.keySet(), "every id applied, none twice");
            for (Sent first : firsts.values()) {
                Applied row = applied.get(first.id());
                assertEquals(first.qty(), row.qty(), first.id() + ": the first content sent is the one applied");
                assertEquals(first.offset(), row.offset(), first.id() + ": applied from its first record");
            }
            long sum = applied.values().stream().mapToLong(Applied::qty).sum();
            assertEquals(firsts.values().stream().mapToLong(Sent::qty).sum(), sum);
            assertEquals(sum, (long) jdbi.withHandle(h -> h.createQuery("SELECT qty FROM total").mapTo(Long.class).one()),
                    "the total equals the sum of qty over distinct applied ids");
            Set<List<Object>> reported = new HashSet<>();
            jdbi.useHandle(h -> h.createQuery("SELECT id, kafka_partition, record_offset FROM conflict")
                    .map((rs, ctx) -> List.<Object>of(rs.getString(1), rs.getInt(2), rs.getLong(3)))
                    .forEach(reported::add));
            assertTrue(!expectedConflicts.isEmpty(), "the stream has conflicts");
            assertEquals(expectedConflicts, reported, "every conflict reported");
            Map<TopicPartition, Long> positions = positions();
            for (Applied row : applied.values()) {
                assertTrue(row.offset() < positions.getOrDefault(row.partition(), 0L), row + " past " + positions);
            }
        }
    }

    private record Sent(String id, int qty, TopicPartition partition, long offset) {}

    private record Applied(String id, int qty, TopicPartition partition, long offset) {}
}
