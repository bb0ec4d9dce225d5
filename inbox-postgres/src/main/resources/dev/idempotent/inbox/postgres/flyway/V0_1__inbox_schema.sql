-- The inbox's own tables on PostgreSQL, schema version 1.
--
-- PostgresInbox runs this script on first use, in one transaction, when the schema it works in
-- (the first schema of the connection's search_path) has no table inbox_schema yet. The same
-- file is a Flyway migration (location classpath:dev/idempotent/inbox/postgres/flyway) and the
-- body of the Liquibase changelog dev/idempotent/inbox/postgres/liquibase/inbox-changelog.xml, so
-- what a migration tool creates and what the inbox creates cannot drift apart; run either in the
-- schema the inbox will use. An inbox that finds version 1 already recorded, or one built with
-- schema mode VALIDATE, runs no DDL at all, so its role then needs only SELECT
-- and INSERT on inbox_message and SELECT on inbox_schema and inbox_horizon, and for purging
-- also DELETE on inbox_message and INSERT and UPDATE on inbox_horizon.
--
-- The script is idempotent. The business tables are the application's.

-- Which schema version each component of the library wrote. The inbox refuses to work on a
-- version newer than it knows.
CREATE TABLE IF NOT EXISTS inbox_schema (
    component TEXT    NOT NULL PRIMARY KEY,
    version   INTEGER NOT NULL
);

-- One row per business id and inbox. The primary key is the unique index that concurrent claims
-- of one id wait on. Ids compare byte for byte (COLLATE "C"), whatever the database's locale.
CREATE TABLE IF NOT EXISTS inbox_message (
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

-- Lets a purge find the oldest rows of one inbox without scanning the table.
CREATE INDEX IF NOT EXISTS inbox_message_received ON inbox_message (inbox, received_at, id);

-- Per inbox, the receive time before which rows may have been purged. Only ever raised.
CREATE TABLE IF NOT EXISTS inbox_horizon (
    inbox   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    horizon TIMESTAMPTZ      NOT NULL
);

INSERT INTO inbox_schema (component, version) VALUES ('inbox', 1)
    ON CONFLICT (component) DO NOTHING;
