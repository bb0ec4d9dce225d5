-- Step 0.3 on MariaDB, with the default names: table inbox_schema records, beside each
-- component's version, its revision (raised by additive changes, which a release of the same
-- version works on) and the oldest release that works on the version (named when a release
-- refuses a newer version). The inbox goes to schema 1.1. The template flyway-prefixed/V0_3__schema_revision.sql
-- holds the same statements with the prefix as a placeholder.
--
-- Additive: a release that reads only version keeps working. IF NOT EXISTS and the WHERE clauses
-- make the script safe to run again (schema mode CREATE on several nodes of a cluster at once).

ALTER TABLE inbox_schema
    ADD COLUMN IF NOT EXISTS revision INT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS min_release VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL;

UPDATE inbox_schema SET revision = 1, min_release = '0.1.0'
    WHERE component = 'inbox' AND version = 1 AND revision < 1;

UPDATE inbox_schema SET min_release = '0.1.0'
    WHERE component = 'kafka_offset' AND min_release IS NULL;
