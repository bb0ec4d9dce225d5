package dev.idempotent.inbox.mariadb.galera;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import dev.idempotent.inbox.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A purge commits on node 1 and, straight after, a resend of an id it purged, with the origin time
 * of the first delivery, arrives on node 2, which may not have applied the purge yet. The resend
 * must never be applied again: refused as stale, or, while node 2 still holds the old row, a
 * duplicate. It holds because every node commits the cluster's writesets in one order and the
 * purge commits the raised horizon before its first delete: a node that no longer holds the row
 * holds the horizon. Run with the inbox's connections at {@code wsrep_sync_wait} 0 (the server's
 * default: nothing waits for the cluster), 1 (reads wait until the node has applied what the
 * cluster committed before them; the claim is an INSERT and does not wait) and 7 (reads, updates,
 * deletes and inserts wait: the claim no longer meets the purged row, so every resend is stale).
 * {@code inbox.galera.stale.rounds} sets the rounds (200 by default).
 */
@OnGalera
class GaleraStaleResendTest {

    private static final String INBOX = "retained";
    private static final Duration RETENTION = Duration.ofDays(30);
    private static final int ROUNDS = Integer.getInteger("inbox.galera.stale.rounds", 200);
    private static final int INSERTS_WAIT = 4; // wsrep_sync_wait's bit for INSERT and REPLACE

    private final GaleraDatabase database = new GaleraDatabase();

    @AfterEach
    void close() {
        database.close();
    }

    @ParameterizedTest(name = "wsrep_sync_wait={0}")
    @ValueSource(ints = {0, 1, 7})
    void aResendOfAnIdPurgedOnAnotherNodeIsNeverAppliedAgain(int syncWait) {
        String options = "&sessionVariables=wsrep_sync_wait=" + syncWait;
        MutableClock clock = new MutableClock(Instant.parse("2026-01-05T10:00:00Z"));
        CallerErrors errors = new CallerErrors();
        Map<String, Integer> answers = new TreeMap<>();
        long began = System.nanoTime();
        try (Inbox<Handle> purging = inbox(1, options, clock); Inbox<Handle> resent = inbox(2, options, clock)) {
            for (int round = 0; round < ROUNDS; round++) {
                String id = "snack-" + round;
                Instant origin = clock.instant();
                assertTrue(purging.apply(id, Content.of(round), origin, tx -> GaleraDatabase.recordRun(tx, id, 1))
                        instanceof Outcome.Applied, id);
                clock.advance(RETENTION.plusDays(1));
                PurgeReport report = purging.retention().purge();
                assertEquals(1, report.rowsPurged(), "rows purged in round " + round);

                String answer = resend(resent, id, round, origin, errors);
                answers.merge(answer, 1, Integer::sum);
            }
        } finally {
            System.out.printf("wsrep_sync_wait=%d: %d resends on node 2 right after a purge on node 1 in %.1f s: %s;"
                    + " errors seen and resent:%n%s", syncWait, ROUNDS, (System.nanoTime() - began) / 1e9, answers,
                    errors.summary());
        }
        assertEquals(0, answers.getOrDefault("applied", 0), "resends applied again: " + answers);
        assertEquals(Map.of("ids", (long) ROUNDS, "total", (long) ROUNDS, "repeated", 0L, "inboxRows", 0L),
                database.tally(2, INBOX));
        if ((syncWait & INSERTS_WAIT) != 0) {
            // The claim's INSERT waits until node 2 has applied the purge, so the old row is gone.
            assertEquals(Map.of("stale", ROUNDS), answers, "every resend refused as stale");
        }
    }

    /** Delivers the resend until it is decided: "stale", "duplicate" or "applied". */
    private static String resend(Inbox<Handle> inbox, String id, int round, Instant origin, CallerErrors errors) {
        for (int attempt = 0; attempt < 1000; attempt++) {
            try {
                Outcome<Integer> outcome = inbox.apply(id, Content.of(round), origin,
                        tx -> GaleraDatabase.recordRun(tx, id, 1));
                return outcome instanceof Outcome.Applied ? "applied"
                        : outcome instanceof Outcome.Duplicate ? "duplicate" : "conflict";
            } catch (StaleMessageException e) {
                assertEquals(FailureKind.PERMANENT, FailureKind.of(e));
                return "stale";
            } catch (RuntimeException e) {
                if (!errors.retryable("apply", e, List.of(id))) {
                    throw new AssertionError("the resend of " + id + " failed: " + CallerErrors.describe(e), e);
                }
            }
        }
        throw new AssertionError("the resend of " + id + " was not decided in 1000 attempts");
    }

    private Inbox<Handle> inbox(int node, String options, MutableClock clock) {
        return MariaDbInbox.builder(database.jdbi(node, options)).name(INBOX).retention(RETENTION).clock(clock).build();
    }
}
