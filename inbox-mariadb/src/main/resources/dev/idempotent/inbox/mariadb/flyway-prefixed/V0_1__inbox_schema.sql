-- The inbox's own tables on MariaDB, schema version 1.0: the template of step 0.1.
--
-- Every table and index name starts with the placeholder inbox_table_prefix, which Flyway fills in
-- from placeholders.inbox_table_prefix (location classpath:dev/idempotent/inbox/mariadb/flyway-prefixed),
-- Liquibase from the changelog parameter of that name
-- (dev/idempotent/inbox/mariadb/liquibase/inbox-changelog-prefixed.xml), and MariaDbInbox from its
-- InboxTables under schema mode CREATE. Names are unqualified: run it in the database the tables
-- belong in. The file flyway/V0_1__inbox_schema.sql holds the same statements with prefix inbox_.
--
-- The script is idempotent. Ids and inbox names compare byte for byte (utf8mb4_nopad_bin, not
-- utf8mb4_bin, which pads with spaces). Times are epoch milliseconds in BIGINT columns.

-- Which schema version each component of the library wrote.
CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}schema (
    component VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    version   INT NOT NULL
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;

-- One row per business id and inbox. The primary key is the unique index that concurrent claims
-- of one id wait on; the second index lets a purge find the oldest rows of one inbox.
CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}message (
    inbox                 VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL, -- one per consumer
    id                    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL, -- the business id
    fingerprint_algorithm INT            NOT NULL,  -- version of the fingerprint encoding
    content_type          VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL, -- e.g. inbox.int64
    content_type_version  INT            NOT NULL,
    fingerprint           VARBINARY(64)  NOT NULL,  -- SHA-256, 32 bytes
    content               LONGBLOB,                 -- NULL unless the inbox keeps full content
    received_at           BIGINT         NOT NULL,  -- first receive time, epoch milliseconds UTC
    PRIMARY KEY (inbox, id),
    INDEX ${inbox_table_prefix}message_received (inbox, received_at, id)
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;

-- Per inbox, the receive time before which rows may have been purged. Only ever raised.
CREATE TABLE IF NOT EXISTS ${inbox_table_prefix}horizon (
    inbox   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    horizon BIGINT NOT NULL  -- epoch milliseconds UTC
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;

INSERT INTO ${inbox_table_prefix}schema (component, version) VALUES ('inbox', 1)
    ON DUPLICATE KEY UPDATE component = component;
