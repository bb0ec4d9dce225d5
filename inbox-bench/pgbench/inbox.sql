-- The inbox's transaction as PostgresTransaction sends it: its BEGIN with the isolation level, the
-- lock timeout and the claim in one round trip, then the effect, then the commit.
\set id random(1, 9000000000000000)
\startpipeline
BEGIN ISOLATION LEVEL READ COMMITTED;
SET LOCAL lock_timeout = '5000ms';
INSERT INTO inbox_message (inbox, id, fingerprint_algorithm, content_type, content_type_version, fingerprint, content, received_at) VALUES ('bench', :id, 1, 'inbox.int64', 1, '\x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'::bytea, NULL, now()) ON CONFLICT (inbox, id) DO NOTHING;
\endpipeline
UPDATE stock SET total = total + 7 WHERE id = 1;
COMMIT;
