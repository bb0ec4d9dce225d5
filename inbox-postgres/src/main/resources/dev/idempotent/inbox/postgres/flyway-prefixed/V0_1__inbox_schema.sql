-- Schema step 0.1 (inbox schema 1.0): the inbox's own tables on PostgreSQL, as a template.
--
-- Every table and derived name is written ${inbox_table_prefix}<name>: Flyway fills the placeholder in
-- (location classpath:dev/idempotent/inbox/postgres/flyway-prefixed, placeholder
-- inbox_table_prefix, such as orders_), so do the Liquibase changelog inbox-changelog-prefixed.xml
-- (changelog parameter inbox_table_prefix) and PostgresInbox under schema mode CREATE (with the
-- prefix of its InboxTables). Names are unqualified: run it in the schema the tables belong in.
-- The same statements with inbox_ written in are flyway/V0_1__inbox_schema.sql, which is never
-- edited; a test keeps the two equal.
--
-- ${inbox_table_prefix}schema records each component's schema level; ${inbox_table_prefix}message holds
-- one row per business id and inbox (ids compare byte for byte, COLLATE "C"), with an index that
-- lets a purge find the oldest rows; ${inbox_table_prefix}horizon holds per inbox the receive time
-- before which rows may have been purged. The script is idempotent.

CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}schema (
    component TEXT    NOT NULL PRIMARY KEY,
    version   INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}message (
    inbox                 TEXT COLLATE "C" NOT NULL,  -- the inbox's name, one per consumer
    id                    TEXT COLLATE "C" NOT NULL,  -- the business id
    fingerprint_algorithm INTEGER     NOT NULL,       -- version of the fingerprint encoding
    content_type          TEXT        NOT NULL,       -- e.g. inbox.int64, or the sender's schema name
    content_type_version  INTEGER     NOT NULL,
    fingerprint           BYTEA       NOT NULL,       -- SHA-256, 32 bytes
    content               BYTEA,                      -- NULL unless the inbox keeps full content
    received_at           TIMESTAMPTZ NOT NULL,       -- first receive time, millisecond precision
    PRIMARY KEY (inbox, id)
);

CREATE INDEX IF NOT EXISTS ${inbox_table_prefix}message_received ON ${inbox_table_prefix}message (inbox, received_at, id);

CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}horizon (
    inbox   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    horizon TIMESTAMPTZ      NOT NULL
);

INSERT INTO ${inbox_table_prefix}schema (component, version) VALUES ('inbox', 1)
    ON CONFLICT (component) DO NOTHING;
