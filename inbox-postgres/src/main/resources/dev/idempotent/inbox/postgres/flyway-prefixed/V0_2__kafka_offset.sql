-- Schema step 0.2 (component kafka_offset 1.0): inbox-kafka's table of offsets on PostgreSQL, as a
-- template: the next offset to consume per consumer group, topic and partition, written in the same
-- transaction as the records consumed. See V0_1 for the placeholder; the same statements with
-- inbox_ written in are flyway/V0_2__kafka_offset.sql, which is never edited. The script is
-- idempotent.

CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}kafka_offset (
    consumer_group  TEXT COLLATE "C" NOT NULL,
    topic           TEXT COLLATE "C" NOT NULL,
    kafka_partition INTEGER          NOT NULL,
    next_offset     BIGINT           NOT NULL,
    PRIMARY KEY (consumer_group, topic, kafka_partition)
);

INSERT INTO ${inbox_table_prefix}schema (component, version) VALUES ('kafka_offset', 1)
    ON CONFLICT (component) DO NOTHING;
