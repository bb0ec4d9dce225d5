-- Schema step 0.3 (inbox schema 1.1) with the default names: a revision and the oldest release that
-- works, beside each component's version in inbox_schema. Flyway runs it as migration 0.3 (location
-- classpath:dev/idempotent/inbox/postgres/flyway), the Liquibase changelog inbox-changelog.xml as
-- change set inbox-schema-revision-1, and PostgresInbox under schema mode CREATE runs the same
-- statements from flyway-prefixed/V0_3__schema_revision.sql, the template this file equals with the
-- prefix inbox_ written in (a test keeps the two equal). Never edit this file once released: add a
-- step.
--
-- A release refuses tables of a version newer than it knows, naming min_release, and accepts a
-- newer revision of the version it knows, so a rolling deploy needs no stop. The script is
-- idempotent.

ALTER TABLE inbox_schema
    ADD COLUMN IF NOT EXISTS revision    INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS min_release TEXT;

UPDATE inbox_schema SET revision = 1, min_release = '0.1.0'
    WHERE component = 'inbox' AND version = 1 AND revision < 1;

UPDATE inbox_schema SET min_release = '0.1.0'
    WHERE component = 'kafka_offset' AND version = 1 AND min_release IS NULL;
