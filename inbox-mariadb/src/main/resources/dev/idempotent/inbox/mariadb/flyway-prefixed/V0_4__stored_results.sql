-- Step 0.4 on MariaDB, the template: table ${inbox_table_prefix}message keeps an effect's result
-- beside the record. All three columns are NULL on a record without one; a stored null has a type
-- and no bytes. The inbox goes to schema 1.2. The file flyway/V0_4__stored_results.sql holds the
-- same statements with prefix inbox_.
--
-- Additive: nullable columns without a default, added at the end, which InnoDB adds in place
-- without rewriting the table; a release that inserts without them keeps working. IF NOT EXISTS and
-- the WHERE clause make the script safe to run again.

ALTER TABLE ${inbox_table_prefix}message
    ADD COLUMN IF NOT EXISTS result_type VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
    ADD COLUMN IF NOT EXISTS result_type_version INT NULL,
    ADD COLUMN IF NOT EXISTS result LONGBLOB NULL;

UPDATE ${inbox_table_prefix}schema SET revision = 2
    WHERE component = 'inbox' AND version = 1 AND revision < 2;
