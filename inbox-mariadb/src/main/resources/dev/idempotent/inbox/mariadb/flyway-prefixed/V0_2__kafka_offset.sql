-- Table ${inbox_table_prefix}kafka_offset on MariaDB, the template of step 0.2: the positions of
-- inbox-kafka's OffsetStorage.DATABASE, the next offset to consume per consumer group, topic and
-- partition. Schema component 'kafka_offset', version 1.0. The file flyway/V0_2__kafka_offset.sql
-- holds the same statements with prefix inbox_.
--
-- The script is idempotent. Group and topic compare byte for byte (utf8mb4_nopad_bin), as Kafka's
-- names are case-sensitive. The ALTER gives a table an earlier inbox-kafka created by itself, with
-- the default collation, the exact one.

CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}kafka_offset (
    consumer_group  VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    topic           VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    kafka_partition INT    NOT NULL,
    next_offset     BIGINT NOT NULL,
    PRIMARY KEY (consumer_group, topic, kafka_partition)
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;

ALTER TABLE ${inbox_table_prefix}kafka_offset
    MODIFY consumer_group VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    MODIFY topic VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL;

INSERT INTO ${inbox_table_prefix}schema (component, version) VALUES ('kafka_offset', 1)
    ON DUPLICATE KEY UPDATE component = component;
