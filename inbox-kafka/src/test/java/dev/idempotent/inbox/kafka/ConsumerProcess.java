package dev.idempotent.inbox.kafka;

import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.postgres.PostgresInbox;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * A consumer in a JVM of its own, for crash tests: applies receipts ("qty" as the value, the id as
 * the key) to a ledger and runs until it is killed. Each applied record leaves a row in
 * {@code applied} with its partition and offset; each conflict a row in {@code conflict}, written in
 * the batch's transaction.
 *
 * <p>Arguments: bootstrap, topic, group, database ({@code sqlite:FILE} or {@code postgres:SCHEMA}),
 * offset storage.
 */
public final class ConsumerProcess {

    /** The ledger's tables; created by the test before any consumer starts. */
    static final List<String> LEDGER = List.of(
            "CREATE TABLE applied (id VARCHAR(300) NOT NULL, qty INTEGER NOT NULL, kafka_partition INTEGER NOT NULL,"
                    + " record_offset BIGINT NOT NULL)",
            "CREATE TABLE conflict (id VARCHAR(300) NOT NULL, kafka_partition INTEGER NOT NULL,"
                    + " record_offset BIGINT NOT NULL)",
            "CREATE TABLE total (n INTEGER PRIMARY KEY, qty BIGINT NOT NULL)",
            "INSERT INTO total (n, qty) VALUES (1, 0)");

    /** The consumers' inboxes keep their tables, and their positions, under a prefix of their own. */
    static final InboxTables TABLES = InboxTables.prefix(TestDatabase.PREFIX);

    private ConsumerProcess() {}

    /**
     * Runs the consumer until the JVM is killed.
     *
     * @param args bootstrap, topic, group, database, offset storage
     */
    public static void main(String[] args) {
        Inbox<Handle> inbox = inbox(args[3]);
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0],
                ConsumerConfig.GROUP_ID_CONFIG, args[2],
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 100,
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 3000,
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
        KafkaInboxConsumer<Handle> consumer = KafkaInboxConsumer.builder(inbox, config, ConsumerProcess::apply)
                .topics(args[1])
                .offsetStorage(OffsetStorage.valueOf(args[4]))
                .listener(new KafkaInboxListener<>() {
                    @Override
                    public void onConflict(Handle tx, ConsumerRecord<String, byte[]> record, Outcome.Conflict<?> conflict) {
                        tx.execute("INSERT INTO conflict (id, kafka_partition, record_offset) VALUES (?, ?, ?)",
                                record.key(), record.partition(), record.offset());
                    }
                })
                .build();
        System.out.println("consuming");
        System.out.flush();
        consumer.run();
    }

    private static void apply(Handle tx, ConsumerRecord<String, byte[]> record) {
        int qty = Integer.parseInt(new String(record.value(), StandardCharsets.UTF_8));
        tx.execute("INSERT INTO applied (id, qty, kafka_partition, record_offset) VALUES (?, ?, ?, ?)",
                record.key(), qty, record.partition(), record.offset());
        tx.execute("UPDATE total SET qty = qty + ? WHERE n = 1", qty);
    }

    /** An inbox on the tables {@link #TABLES} names, in the database the argument names. */
    private static Inbox<Handle> inbox(String database) {
        if (database.startsWith("sqlite:")) {
            return SqliteInbox.builder(Path.of(database.substring("sqlite:".length()))).tables(TABLES).build();
        }
        return PostgresInbox.builder(Jdbi.create(postgresUrl(database.substring("postgres:".length()))))
                .tables(TABLES).build();
    }

    /**
     * The test database's URL with {@code schema} as the search path: 127.0.0.1:5432, database
     * {@code test}, user {@code postgres}, unless {@code INBOX_PG_HOST}, {@code INBOX_PG_PORT},
     * {@code INBOX_PG_DATABASE} or {@code INBOX_PG_USER} say otherwise, as for inbox-postgres's tests.
     */
    static String postgresUrl(String schema) {
        return "jdbc:postgresql://" + environment("INBOX_PG_HOST", "127.0.0.1") + ":"
                + environment("INBOX_PG_PORT", "5432") + "/" + environment("INBOX_PG_DATABASE", "test")
                + "?user=" + environment("INBOX_PG_USER", "postgres") + "&currentSchema=" + schema;
    }

    private static String environment(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /**
     * Starts a consumer JVM with this JVM's class path.
     *
     * @param log where its output goes
     * @param args as {@link #main} takes them
     * @return the process
     */
    static Process start(Path log, String... args) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        String logging = System.getProperty("java.util.logging.config.file");
        if (logging != null) {
            command.add("-Djava.util.logging.config.file=" + logging);
        }
        command.add("-cp");
        command.add(Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(entry -> Path.of(entry).toAbsolutePath().toString())
                .collect(Collectors.joining(File.pathSeparator)));
        command.add(ConsumerProcess.class.getName());
        command.addAll(List.of(args));
        try {
            return new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
