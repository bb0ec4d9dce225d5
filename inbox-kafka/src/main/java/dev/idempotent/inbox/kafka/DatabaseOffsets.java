package dev.idempotent.inbox.kafka;

import dev.idempotent.inbox.InboxStorageException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.jdbi.v3.core.Handle;

/**
 * Table {@code inbox_kafka_offset}: the next offset to consume per group, topic and partition,
 * written through the batch's own transaction handle so it commits with the batch. The table is the
 * inbox's schema step's (schema mode {@code CREATE}, or migration {@value #MIGRATION}); nothing
 * here runs DDL, which MariaDB would commit in the middle of the batch's transaction.
 */
final class DatabaseOffsets {

    static final String TABLE = "inbox_kafka_offset";
    static final String MIGRATION = "V0_2__kafka_offset.sql";

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

    /**
     * Refuses a database without the table, naming the migration that makes it.
     *
     * @throws InboxStorageException of kind {@code SCHEMA_MISSING} if the table is missing
     */
    static void requireTable(Handle handle) {
        boolean exists;
        try {
            Connection connection = handle.getConnection();
            DatabaseMetaData metaData = connection.getMetaData();
            String escape = metaData.getSearchStringEscape();
            String pattern = escape == null || escape.isEmpty() ? TABLE : TABLE.replace("_", escape + "_");
            // The connection's own catalog and schema: where the inbox's tables are.
            try (ResultSet tables = metaData.getTables(connection.getCatalog(), connection.getSchema(), pattern,
                    null)) {
                exists = tables.next();
            }
        } catch (SQLException e) {
            throw new InboxStorageException(InboxStorageException.Kind.OTHER,
                    "could not tell whether table " + TABLE + " exists", e);
        }
        String advice = "; run the inbox's migration " + MIGRATION + " (Flyway location"
                + " classpath:dev/idempotent/inbox/<database>/flyway, or change set inbox-kafka-offset-1 of the"
                + " inbox's Liquibase changelog)";
        if (!exists) {
            throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING, "table " + TABLE
                    + ", where OffsetStorage.DATABASE keeps positions, is missing" + advice, null);
        }
        // A table an earlier version of this consumer created on MariaDB has the database's default
        // collation, under which 'warehouse' and 'Warehouse' are one group; the migration converts it.
        if (isMySqlFamily(handle) && handle.createQuery("SELECT COUNT(*) FROM information_schema.COLUMNS"
                        + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = :table"
                        + " AND COLUMN_NAME IN ('consumer_group', 'topic') AND COLLATION_NAME NOT LIKE '%\\_bin'")
                .bind("table", TABLE).mapTo(Integer.class).one() > 0) {
            throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING, "table " + TABLE
                    + " compares group and topic case-insensitively, but Kafka's names are case-sensitive" + advice,
                    null);
        }
    }

    /** Reads the stored positions of {@code partitions}; those without one are absent. */
    Map<TopicPartition, Long> read(Handle handle, Collection<TopicPartition> partitions) {
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

    /**
     * Stores {@code nextOffset} as the position of {@code partition}, in {@code handle}'s transaction,
     * unless a later one is stored. A member the group has already evicted (its batch, or the
     * record-by-record retry of one, outlived {@code max.poll.interval.ms}) still commits what it
     * holds; its position must not take back the new owner's, or the records between would be
     * delivered again and their conflicts and rejections reported twice.
     */
    void write(Handle handle, TopicPartition partition, long nextOffset) {
        handle.createUpdate(upsert(handle))
                .bind(0, group).bind(1, partition.topic()).bind(2, partition.partition()).bind(3, nextOffset)
                .execute();
    }

    private static String upsert(Handle handle) {
        String insert = "INSERT INTO inbox_kafka_offset (consumer_group, topic, kafka_partition, next_offset)"
                + " VALUES (?, ?, ?, ?)";
        if (isMySqlFamily(handle)) {
            return insert + " ON DUPLICATE KEY UPDATE next_offset = GREATEST(next_offset, VALUES(next_offset))";
        }
        return insert + " ON CONFLICT (consumer_group, topic, kafka_partition) DO UPDATE SET next_offset = excluded.next_offset"
                + " WHERE inbox_kafka_offset.next_offset < excluded.next_offset";
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
