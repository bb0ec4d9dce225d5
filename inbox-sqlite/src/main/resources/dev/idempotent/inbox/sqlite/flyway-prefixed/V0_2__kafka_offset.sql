-- Table ${inbox_table_prefix}kafka_offset on SQLite, with the table prefix as a placeholder: the
-- template of flyway/V0_2__kafka_offset.sql (schema component 'kafka_offset', version 1), the
-- positions of inbox-kafka's OffsetStorage.DATABASE.

CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}kafka_offset (
    consumer_group  TEXT    NOT NULL,
    topic           TEXT    NOT NULL,
    kafka_partition INTEGER NOT NULL,
    next_offset     INTEGER NOT NULL,
    PRIMARY KEY (consumer_group, topic, kafka_partition)
);

INSERT INTO ${inbox_table_prefix}schema (component, version) VALUES ('kafka_offset', 1)
    ON CONFLICT (component) DO NOTHING;
