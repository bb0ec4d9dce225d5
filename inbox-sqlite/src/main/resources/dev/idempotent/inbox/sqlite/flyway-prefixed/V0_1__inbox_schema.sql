-- The inbox's own tables on SQLite, schema version 1, with the table prefix as a placeholder.
--
-- The template of flyway/V0_1__inbox_schema.sql: the same statements, with every table and index
-- name written ${inbox_table_prefix}... (Flyway placeholder inbox_table_prefix, or the Liquibase
-- changelog parameter of the same name). SqliteInbox fills it in with its own prefix and runs it on
-- first use (schema mode CREATE) when the step is pending. A test in inbox-sqlite proves that,
-- filled in with inbox_, it is the shipped file's statements.

CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}schema (
    component TEXT    NOT NULL PRIMARY KEY,
    version   INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}message (
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
CREATE INDEX IF NOT EXISTS ${inbox_table_prefix}message_received ON ${inbox_table_prefix}message (inbox, received_at, id);

-- Per inbox, the receive time before which rows may have been purged. Only ever raised.
CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}horizon (
    inbox   TEXT    NOT NULL PRIMARY KEY,
    horizon INTEGER NOT NULL               -- epoch milliseconds UTC
) WITHOUT ROWID;

INSERT INTO ${inbox_table_prefix}schema (component, version) VALUES ('inbox', 1)
    ON CONFLICT (component) DO NOTHING;
