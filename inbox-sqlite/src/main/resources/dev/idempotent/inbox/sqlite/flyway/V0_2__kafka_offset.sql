-- Table inbox_kafka_offset on SQLite: the positions of inbox-kafka's OffsetStorage.DATABASE, the
-- next offset to consume per consumer group, topic and partition, written in the same transaction
-- as the records consumed. Schema component 'kafka_offset', version 1.
--
-- SqliteInbox runs this script after V0_1 on first use (schema mode CREATE); Flyway runs it as
-- migration 0.2 and the Liquibase changelog as its change set inbox-kafka-offset-1. The Kafka
-- consumer itself runs no DDL: it refuses to start when the table is missing.
--
-- The script is idempotent. Group and topic compare exactly: TEXT with SQLite's default BINARY
-- collation, as Kafka's names are case-sensitive.

CREATE TABLE IF NOT EXISTS inbox_kafka_offset (
    consumer_group  TEXT    NOT NULL,
    topic           TEXT    NOT NULL,
    kafka_partition INTEGER NOT NULL,
    next_offset     INTEGER NOT NULL,
    PRIMARY KEY (consumer_group, topic, kafka_partition)
);

INSERT INTO inbox_schema (component, version) VALUES ('kafka_offset', 1)
    ON CONFLICT (component) DO NOTHING;
