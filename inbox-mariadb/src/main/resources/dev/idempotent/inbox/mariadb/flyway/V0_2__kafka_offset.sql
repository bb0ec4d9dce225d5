-- Table inbox_kafka_offset on MariaDB: the positions of inbox-kafka's OffsetStorage.DATABASE, the
-- next offset to consume per consumer group, topic and partition, written in the same transaction
-- as the records consumed. Schema component 'kafka_offset', version 1.
--
-- MariaDbInbox runs this script right after V0_1 when it creates the schema on first use (schema
-- mode CREATE, under the schema lock); over a schema already in place it runs no DDL, so there
-- Flyway runs it as migration 0.2 and the Liquibase changelog as its change set
-- inbox-kafka-offset-1 (or run it by hand). The Kafka consumer itself runs no DDL (MariaDB commits
-- DDL implicitly, which would break the batch's transaction): it refuses to start when the table
-- is missing, or when its key still compares case-insensitively.
--
-- The script is idempotent. Group and topic compare byte for byte (utf8mb4_nopad_bin), as Kafka's
-- names are case-sensitive: the database's default collation would make 'warehouse' and
-- 'Warehouse', or 'x' and 'x ', one key. The ALTER gives a table an earlier inbox-kafka created by
-- itself, with the default collation, the exact one; rows it holds stay as they are.

CREATE TABLE IF NOT EXISTS inbox_kafka_offset (
    consumer_group  VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    topic           VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    kafka_partition INT    NOT NULL,
    next_offset     BIGINT NOT NULL,
    PRIMARY KEY (consumer_group, topic, kafka_partition)
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;

ALTER TABLE inbox_kafka_offset
    MODIFY consumer_group VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    MODIFY topic VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL;

INSERT INTO inbox_schema (component, version) VALUES ('kafka_offset', 1)
    ON DUPLICATE KEY UPDATE component = component;
