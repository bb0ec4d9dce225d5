-- The inbox's transaction with the lock timeout set by the claim itself, one statement fewer.
\set id random(1, 9000000000000000)
\startpipeline
BEGIN ISOLATION LEVEL READ COMMITTED;
INSERT INTO inbox_message (inbox, id, fingerprint_algorithm, content_type, content_type_version, fingerprint, content, received_at) VALUES (CASE WHEN set_config('lock_timeout', '5000ms', true) IS NULL THEN NULL ELSE 'bench' END, :id, 1, 'inbox.int64', 1, '\x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'::bytea, NULL, now()) ON CONFLICT (inbox, id) DO NOTHING;
\endpipeline
UPDATE stock SET total = total + 7 WHERE id = 1;
COMMIT;
