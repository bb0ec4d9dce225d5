package dev.idempotent.inbox.kafka;

import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
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
 * The inbox's table of offsets ({@link InboxTables#kafkaOffsetTable()}: {@code inbox_kafka_offset}
 * by default, {@code <prefix>kafka_offset} in the inbox's schema otherwise): the next offset to
 * consume per group, topic and partition, written through the batch's own transaction handle so it
 * commits with the batch. The table is the inbox's schema step's (schema mode {@code CREATE}, or
 * migration {@value #MIGRATION}); nothing here runs DDL, which MariaDB would commit in the middle of
 * the batch's transaction.
 */
final class DatabaseOffsets {

    static final String MIGRATION = "V0_2__kafka_offset.sql";
    static final String CHANGE_SET = "inbox-kafka-offset-1";

    private final String group;
    private final InboxTables tables;
    private final String table;
    private final String select;
    private final String upsert;
    private final String upsertMySql;

    /**
     * @param group the consumer group whose positions these are
     * @param tables the inbox's tables, whose table of offsets keeps them
     */
    DatabaseOffsets(String group, InboxTables tables) {
        this.group = group;
        this.tables = tables;
        this.table = tables.kafkaOffsetTable();
        this.select = "SELECT next_offset FROM " + table + " WHERE consumer_group = ? AND topic = ? AND kafka_partition = ?";
        // The alias names the stored row in the WHERE, whatever the table's qualified name.
        this.upsert = "INSERT INTO " + table + " AS o (consumer_group, topic, kafka_partition, next_offset)"
                + " VALUES (?, ?, ?, ?) ON CONFLICT (consumer_group, topic, kafka_partition)"
                + " DO UPDATE SET next_offset = excluded.next_offset WHERE o.next_offset < excluded.next_offset";
        this.upsertMySql = "INSERT INTO " + table + " (consumer_group, topic, kafka_partition, next_offset)"
                + " VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE next_offset = GREATEST(next_offset, VALUES(next_offset))";
    }

    /** {@return the qualified name of the table, for messages} */
    String table() {
        return table;
    }

    static Handle handleOf(Object tx) {
        if (tx instanceof Handle handle) {
            return handle;
        }
        throw new IllegalStateException("OffsetStorage.DATABASE needs an inbox whose transaction handle is a Jdbi"
                + " Handle (the SQLite, PostgreSQL or MariaDB inbox); this one gives " + tx.getClass().getName());
    }

    /**
     * Refuses a database without the table, naming the migration that makes it. Looks in the
     * inbox's schema (a PostgreSQL schema, a MariaDB database), or the connection's own when the
     * inbox names none.
     *
     * @throws InboxStorageException of kind {@code SCHEMA_MISSING} if the table is missing
     */
    void requireTable(Handle handle) {
        String name = tables.name("kafka_offset");
        boolean mySqlFamily = isMySqlFamily(handle);
        boolean exists;
        try {
            Connection connection = handle.getConnection();
            DatabaseMetaData metaData = connection.getMetaData();
            String escape = metaData.getSearchStringEscape();
            String catalog = connection.getCatalog();
            String schema = connection.getSchema();
            if (tables.schema().isPresent()) {
                // MariaDB's driver calls its databases catalogs; PostgreSQL's schemas are schemas.
                if (mySqlFamily) {
                    catalog = tables.schema().get();
                } else {
                    schema = tables.schema().get();
                }
            }
            try (ResultSet found = metaData.getTables(catalog, pattern(schema, escape), pattern(name, escape), null)) {
                exists = found.next();
            }
        } catch (SQLException e) {
            throw new InboxStorageException(InboxStorageException.Kind.OTHER,
                    "could not tell whether table " + table + " exists", e);
        }
        if (!exists) {
            throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING, "table " + table
                    + ", where OffsetStorage.DATABASE keeps positions, is missing" + advice(), null);
        }
        // A table an earlier version of this consumer created on MariaDB has the database's default
        // collation, under which 'warehouse' and 'Warehouse' are one group; the migration converts it.
        if (mySqlFamily && handle.createQuery("SELECT COUNT(*) FROM information_schema.COLUMNS"
                        + " WHERE TABLE_SCHEMA = COALESCE(:schema, DATABASE()) AND TABLE_NAME = :table"
                        + " AND COLUMN_NAME IN ('consumer_group', 'topic') AND COLLATION_NAME NOT LIKE '%\\_bin'")
                .bind("schema", tables.schema().orElse(null)).bind("table", name).mapTo(Integer.class).one() > 0) {
            throw new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING, "table " + table
                    + " compares group and topic case-insensitively, but Kafka's names are case-sensitive" + advice(),
                    null);
        }
    }

    /** The migration in both Flyway locations and the Liquibase change set, for this inbox's names. */
    private String advice() {
        String prefixed = "classpath:dev/idempotent/inbox/<database>/flyway-prefixed with placeholder"
                + " inbox_table_prefix=" + tables.prefix();
        String location = tables.prefix().equals(InboxTables.DEFAULT_PREFIX)
                ? "Flyway location classpath:dev/idempotent/inbox/<database>/flyway, or " + prefixed
                : "Flyway location " + prefixed;
        return "; run the inbox's migration " + MIGRATION + " (" + location
                + tables.schema().map(schema -> ", in schema " + schema).orElse("")
                + "; or change set " + CHANGE_SET + " of the inbox's Liquibase changelog, liquibase/inbox-changelog"
                + (tables.prefix().equals(InboxTables.DEFAULT_PREFIX) ? "" : "-prefixed") + ".xml)";
    }

    private static String pattern(String name, String escape) {
        if (name == null) {
            return null;
        }
        return escape == null || escape.isEmpty() ? name : name.replace("_", escape + "_");
    }

    /** Reads the stored positions of {@code partitions}; those without one are absent. */
    Map<TopicPartition, Long> read(Handle handle, Collection<TopicPartition> partitions) {
        Map<TopicPartition, Long> stored = new HashMap<>();
        for (TopicPartition partition : partitions) {
            handle.createQuery(select)
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
        handle.createUpdate(isMySqlFamily(handle) ? upsertMySql : upsert)
                .bind(0, group).bind(1, partition.topic()).bind(2, partition.partition()).bind(3, nextOffset)
                .execute();
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
