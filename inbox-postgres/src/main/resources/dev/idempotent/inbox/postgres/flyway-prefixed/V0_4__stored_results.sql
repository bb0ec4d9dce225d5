-- Schema step 0.4 (inbox schema 1.2), as a template (see V0_1 for the placeholder): the columns of
-- an effect's stored result on ${inbox_table_prefix}message. All three are NULL on a record without a
-- result (every row from before, and every row of an inbox that stores none); a stored null has a
-- type and no bytes. Nullable columns without a default rewrite no rows, and releases before this
-- step, which insert without them, keep working. The same statements with inbox_ written in are
-- flyway/V0_4__stored_results.sql. The script is idempotent.

ALTER TABLE ${inbox_table_prefix}message
    ADD COLUMN IF NOT EXISTS result_type         TEXT,     -- the result codec's type name
    ADD COLUMN IF NOT EXISTS result_type_version INTEGER,  -- the codec's version of that type
    ADD COLUMN IF NOT EXISTS result              BYTEA;    -- what the codec wrote; NULL for a stored null

UPDATE ${inbox_table_prefix}schema SET revision = 2
    WHERE component = 'inbox' AND version = 1 AND revision < 2;
