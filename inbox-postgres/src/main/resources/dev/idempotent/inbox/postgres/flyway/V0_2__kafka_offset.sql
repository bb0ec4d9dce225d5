-- Table inbox_kafka_offset on PostgreSQL: the positions of inbox-kafka's OffsetStorage.DATABASE,
-- the next offset to consume per consumer group, topic and partition, written in the same
-- transaction as the records consumed. Schema component 'kafka_offset', version 1.
--
-- PostgresInbox runs this script right after V0_1 when it creates the schema on first use (schema
-- mode CREATE); over a schema already in place it runs no DDL, so there Flyway runs it as migration
-- 0.2 and the Liquibase changelog as its change set inbox-kafka-offset-1 (or run it by hand). The
-- Kafka consumer itself runs no DDL: it refuses to start when the table is missing.
--
-- The script is idempotent. Group and topic compare byte for byte (COLLATE "C"), as Kafka's names
-- are case-sensitive. A table an earlier inbox-kafka created by itself has the database's default
-- collation, which is deterministic, so it compares exactly too and is left as it is.

CREATE TABLE IF NOT EXISTS inbox_kafka_offset (
    consumer_group  TEXT COLLATE "C" NOT NULL,
    topic           TEXT COLLATE "C" NOT NULL,
    kafka_partition INTEGER          NOT NULL,
    next_offset     BIGINT           NOT NULL,
    PRIMARY KEY (consumer_group, topic, kafka_partition)
);

INSERT INTO inbox_schema (component, version) VALUES ('kafka_offset', 1)
    ON CONFLICT (component) DO NOTHING;
