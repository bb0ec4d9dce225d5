-- Schema step 0.4 on SQLite: each record can keep its effect's result, encoded by the inbox's
-- codec, with the codec's type name and version. Inbox schema 1.2, additive: the columns are
-- nullable and have no default, so no row is rewritten and releases that do not know them keep
-- inserting and reading rows as before. A row without a result has all three NULL, and a stored null
-- has a type and no bytes. Run once: by Flyway (migration 0.4), by Liquibase (change set
-- inbox-stored-results-1), or by SqliteInbox under schema mode CREATE when the step is pending.

ALTER TABLE inbox_message ADD COLUMN result_type TEXT;

ALTER TABLE inbox_message ADD COLUMN result_type_version INTEGER;

ALTER TABLE inbox_message ADD COLUMN result BLOB;

UPDATE inbox_schema SET revision = 2 WHERE component = 'inbox';
