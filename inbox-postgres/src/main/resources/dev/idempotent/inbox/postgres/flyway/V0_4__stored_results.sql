-- Schema step 0.4 (inbox schema 1.2) with the default names: the columns of an effect's stored
-- result on inbox_message, all NULL on a record without one. Flyway runs it as migration 0.4
-- (location classpath:dev/idempotent/inbox/postgres/flyway), the Liquibase changelog
-- inbox-changelog.xml as change set inbox-stored-results-1, and PostgresInbox under schema mode
-- CREATE runs the same statements from flyway-prefixed/V0_4__stored_results.sql, the template this
-- file equals with the prefix inbox_ written in. Additive: releases before it keep working on the
-- table. Never edit this file once released: add a step. The script is idempotent.

ALTER TABLE inbox_message
    ADD COLUMN IF NOT EXISTS result_type         TEXT,     -- the result codec's type name
    ADD COLUMN IF NOT EXISTS result_type_version INTEGER,  -- the codec's version of that type
    ADD COLUMN IF NOT EXISTS result              BYTEA;    -- what the codec wrote; NULL for a stored null

UPDATE inbox_schema SET revision = 2
    WHERE component = 'inbox' AND version = 1 AND revision < 2;
