-- The hand-written transaction of PostgresPeers.Side.JDBC, as pgjdbc sends it: BEGIN and the claim
-- in one round trip, then the effect, then the commit.
\set id random(1, 9000000000000000)
\startpipeline
BEGIN;
INSERT INTO processed_message (id) VALUES (:id) ON CONFLICT DO NOTHING;
\endpipeline
UPDATE stock SET total = total + 7 WHERE id = 1;
COMMIT;
