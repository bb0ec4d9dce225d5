-- The inbox's own tables on SQLite, schema version 1.
--
-- SqliteInbox runs this script on first use (schema mode CREATE, the default), inside one BEGIN
-- IMMEDIATE transaction. The same file is a Flyway migration (location
-- classpath:dev/idempotent/inbox/sqlite/flyway) and the body of the Liquibase changelog
-- dev/idempotent/inbox/sqlite/liquibase/inbox-changelog.xml, so what a migration tool creates and
-- what the inbox creates cannot drift apart. An inbox built with schema mode VALIDATE runs no DDL
-- and only checks that these tables and the version row are there.
--
-- The script is idempotent. The business tables are the application's.

-- Which schema version each component of the library wrote. The inbox refuses to work on a
-- version newer than it knows.
CREATE TABLE IF NOT EXISTS inbox_schema (
    component TEXT    NOT NULL PRIMARY KEY,
    version   INTEGER NOT NULL
) WITHOUT ROWID;

-- One row per business id and inbox. WITHOUT ROWID keeps the primary key the only index.
CREATE TABLE IF NOT EXISTS inbox_message (
    inbox                 TEXT    NOT NULL,  -- the inbox's name; one per consumer
    id                    TEXT    NOT NULL,  -- the business id
    fingerprint_algorithm INTEGER NOT NULL,  -- version of the fingerprint encoding
    content_type          TEXT    NOT NULL,  -- e.g. inbox.int64, or the sender's schema name
    content_type_version  INTEGER NOT NULL,
    fingerprint           BLOB    NOT NULL,  -- SHA-256, 32 bytes
    content               BLOB,              -- NULL unless the inbox keeps full content
    received_at           INTEGER NOT NULL,  -- first receive time, epoch milliseconds UTC
    PRIMARY KEY (inbox, id)
) WITHOUT ROWID;

-- Lets a purge find the oldest rows of one inbox without scanning the table.
CREATE INDEX IF NOT EXISTS inbox_message_received ON inbox_message (inbox, received_at, id);

-- Per inbox, the receive time before which rows may have been purged. Only ever raised.
CREATE TABLE IF NOT EXISTS inbox_horizon (
    inbox   TEXT    NOT NULL PRIMARY KEY,
    horizon INTEGER NOT NULL               -- epoch milliseconds UTC
) WITHOUT ROWID;

INSERT INTO inbox_schema (component, version) VALUES ('inbox', 1)
    ON CONFLICT (component) DO NOTHING;
