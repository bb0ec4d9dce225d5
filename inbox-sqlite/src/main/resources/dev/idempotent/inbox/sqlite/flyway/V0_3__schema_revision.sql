-- Schema step 0.3 on SQLite: inbox_schema records a revision and the oldest release
-- each component's version works with. Inbox schema 1.1.
--
-- A revision is an additive change: a release that knows revision 1 of version 1 works on revision
-- 2 of it, so a rolling deploy migrates first and replaces instances afterwards. Releases up to
-- 0.1 read only column version, which this step leaves alone. Run once: by Flyway (migration 0.3),
-- by Liquibase (change set inbox-schema-revision-1), or by SqliteInbox under schema mode CREATE
-- when the step is pending.

ALTER TABLE inbox_schema ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;

ALTER TABLE inbox_schema ADD COLUMN min_release TEXT;

UPDATE inbox_schema SET revision = 1, min_release = '0.1.0' WHERE component = 'inbox';

UPDATE inbox_schema SET min_release = '0.1.0' WHERE component = 'kafka_offset';
