-- Schema step 0.3 (inbox schema 1.1), as a template (see V0_1 for the placeholder): a revision and
-- the oldest release that works, beside each component's version in ${inbox_table_prefix}schema.
--
-- A release refuses tables of a version newer than it knows, naming min_release, and accepts a
-- newer revision of the version it knows: a revision only adds what older releases do not use, so
-- a rolling deploy migrates first and replaces instances afterwards. Releases before this step read
-- only the version, which this step leaves as it is. Adding a column with a constant default
-- rewrites no rows. The same statements with inbox_ written in are flyway/V0_3__schema_revision.sql.
-- The script is idempotent.

ALTER TABLE ${inbox_table_prefix}schema
    ADD COLUMN IF NOT EXISTS revision    INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS min_release TEXT;

UPDATE ${inbox_table_prefix}schema SET revision = 1, min_release = '0.1.0'
    WHERE component = 'inbox' AND version = 1 AND revision < 1;

UPDATE ${inbox_table_prefix}schema SET min_release = '0.1.0'
    WHERE component = 'kafka_offset' AND version = 1 AND min_release IS NULL;
