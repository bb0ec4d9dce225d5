-- The inbox's own tables on MariaDB, schema version 1.
--
-- MariaDbInbox runs this script on first use, under a named lock (GET_LOCK), when the connection's
-- database has no table inbox_schema yet. The same file is a Flyway migration (location
-- classpath:dev/idempotent/inbox/mariadb/flyway) and the body of the Liquibase changelog
-- dev/idempotent/inbox/mariadb/liquibase/inbox-changelog.xml, so what a migration tool creates and
-- what the inbox creates cannot drift apart; run either in the database the inbox will use. An
-- inbox that finds version 1 already recorded, or one built with schema mode VALIDATE, runs no
-- DDL at all, so its user then needs only SELECT, INSERT and UPDATE on inbox_message (a claim is
-- an INSERT ... ON DUPLICATE KEY UPDATE that changes nothing, which MariaDB checks as an update)
-- and SELECT on inbox_schema and inbox_horizon, and for purging also DELETE on inbox_message and
-- INSERT and UPDATE on inbox_horizon.
--
-- The script is idempotent. The business tables are the application's.
--
-- Ids and inbox names compare byte for byte: utf8mb4_nopad_bin, not utf8mb4_bin, because
-- utf8mb4_bin pads with spaces, so 'x' and 'x ' would be one key. (MySQL 8 calls the same
-- collation utf8mb4_0900_bin.) Times are epoch milliseconds in BIGINT columns: exact, and free of
-- the session time zone that DATETIME values are read and written in.

-- Which schema version each component of the library wrote. The inbox refuses to work on a
-- version newer than it knows.
CREATE TABLE IF NOT EXISTS inbox_schema (
    component VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    version   INT NOT NULL
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;

-- One row per business id and inbox. The primary key is the unique index that concurrent claims
-- of one id wait on; the second index lets a purge find the oldest rows of one inbox without
-- scanning the table.
CREATE TABLE IF NOT EXISTS inbox_message (
    inbox                 VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL, -- one per consumer
    id                    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL, -- the business id
    fingerprint_algorithm INT            NOT NULL,  -- version of the fingerprint encoding
    content_type          VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL, -- e.g. inbox.int64
    content_type_version  INT            NOT NULL,
    fingerprint           VARBINARY(64)  NOT NULL,  -- SHA-256, 32 bytes
    content               LONGBLOB,                 -- NULL unless the inbox keeps full content
    received_at           BIGINT         NOT NULL,  -- first receive time, epoch milliseconds UTC
    PRIMARY KEY (inbox, id),
    INDEX inbox_message_received (inbox, received_at, id)
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;

-- Per inbox, the receive time before which rows may have been purged. Only ever raised.
CREATE TABLE IF NOT EXISTS inbox_horizon (
    inbox   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    horizon BIGINT NOT NULL  -- epoch milliseconds UTC
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;

INSERT INTO inbox_schema (component, version) VALUES ('inbox', 1)
    ON DUPLICATE KEY UPDATE component = component;
