package dev.idempotent.inbox.kafka;

import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.jdbi.v3.core.Handle;

/**
 * Table {@code inbox_kafka_offset}: the next offset to consume per group, topic and partition,
 * written through the batch's own transaction handle so it commits with the batch.
 */
final class DatabaseOffsets {

    static final String CREATE = """
            CREATE TABLE IF NOT EXISTS inbox_kafka_offset (
                consumer_group VARCHAR(255) NOT NULL,
                topic VARCHAR(255) NOT NULL,
                kafka_partition INTEGER NOT NULL,
                next_offset BIGINT NOT NULL,
                PRIMARY KEY (consumer_group, topic, kafka_partition))""";

    private final String group;

    DatabaseOffsets(String group) {
        this.group = group;
    }

    static Handle handleOf(Object tx) {
        if (tx instanceof Handle handle) {
            return handle;
        }
        throw new IllegalStateException("OffsetStorage.DATABASE needs an inbox whose transaction handle is a Jdbi"
                + " Handle (the SQLite, PostgreSQL or MariaDB inbox); this one gives " + tx.getClass().getName());
    }

    /** Creates the table if absent and reads the stored positions of {@code partitions}. */
    Map<TopicPartition, Long> read(Handle handle, Collection<TopicPartition> partitions) {
        handle.execute(CREATE);
        Map<TopicPartition, Long> stored = new HashMap<>();
        for (TopicPartition partition : partitions) {
            handle.createQuery("SELECT next_offset FROM inbox_kafka_offset"
                            + " WHERE consumer_group = ? AND topic = ? AND kafka_partition = ?")
                    .bind(0, group).bind(1, partition.topic()).bind(2, partition.partition())
                    .mapTo(Long.class).findOne()
                    .ifPresent(offset -> stored.put(partition, offset));
        }
        return stored;
    }

    /** Stores {@code nextOffset} as the position of {@code partition}, in {@code handle}'s transaction. */
    void write(Handle handle, TopicPartition partition, long nextOffset) {
        handle.createUpdate(upsert(handle))
                .bind(0, group).bind(1, partition.topic()).bind(2, partition.partition()).bind(3, nextOffset)
                .execute();
    }

    private static String upsert(Handle handle) {
        String insert = "INSERT INTO inbox_kafka_offset (consumer_group, topic, kafka_partition, next_offset)"
                + " VALUES (?, ?, ?, ?)";
        if (isMySqlFamily(handle)) {
            return insert + " ON DUPLICATE KEY UPDATE next_offset = VALUES(next_offset)";
        }
        return insert + " ON CONFLICT (consumer_group, topic, kafka_partition) DO UPDATE SET next_offset = excluded.next_offset";
    }

    private static boolean isMySqlFamily(Handle handle) {
        try {
            String product = handle.getConnection().getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
            return product.contains("mariadb") || product.contains("mysql");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot tell which database the inbox writes to", e);
        }
    }
}
