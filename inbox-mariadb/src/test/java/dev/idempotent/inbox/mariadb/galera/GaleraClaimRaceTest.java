package dev.idempotent.inbox.mariadb.galera;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import dev.idempotent.inbox.mariadb.galera.Calls.Mode;
import dev.idempotent.inbox.mariadb.galera.Calls.Target;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The same id delivered on two nodes at the same moment, round after round: there is no lock
 * across nodes, so both claims succeed locally and Galera's certification decides at commit. Each
 * round must end with exactly one Applied; the other caller sees Duplicate, or first an error
 * typed retryable and then, resending, Duplicate. {@code inbox.galera.rounds} sets the rounds per
 * way of calling (1,000 by default).
 *
 * <p>With {@code applyAll} each side's batch also holds an id of its own, which must be applied
 * once whatever happens to the batch.
 */
@OnGalera
class GaleraClaimRaceTest {

    private static final String INBOX = "race";
    private static final int ROUNDS = Integer.getInteger("inbox.galera.rounds", 1000);

    private final GaleraDatabase database = new GaleraDatabase();
    private final ExecutorService sides = Executors.newFixedThreadPool(2);

    @AfterEach
    void close() throws InterruptedException {
        sides.shutdownNow();
        assertTrue(sides.awaitTermination(30, TimeUnit.SECONDS));
        database.close();
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void theSameIdClaimedOnTwoNodesAtOnceIsAppliedExactlyOnce(Mode mode) throws Exception {
        CallerErrors errors = new CallerErrors();
        Target[] targets = {target(1, mode), target(2, mode)};
        CyclicBarrier start = new CyclicBarrier(2);
        long began = System.nanoTime();
        int[] applied = new int[ROUNDS];
        try {
            for (int round = 0; round < ROUNDS; round++) {
                String id = mode + "-" + round;
                Future<?>[] results = new Future<?>[2];
                for (int side = 0; side < 2; side++) {
                    Target target = targets[side];
                    List<Message> batch = mode == Mode.APPLY_ALL
                            ? List.of(Message.of(id + "-own-" + side, Content.of(1)), Message.of(id, Content.of(1)))
                            : List.of(Message.of(id, Content.of(1)));
                    results[side] = sides.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        return new Calls(mode, errors).deliver(batch, attempt -> target);
                    });
                }
                for (Future<?> result : results) {
                    @SuppressWarnings("unchecked")
                    List<Outcome<Integer>> outcomes = (List<Outcome<Integer>>) result.get(120, TimeUnit.SECONDS);
                    Outcome<Integer> shared = outcomes.get(outcomes.size() - 1);
                    if (shared instanceof Outcome.Applied) {
                        applied[round]++;
                    }
                    if (mode == Mode.APPLY_ALL) {
                        assertTrue(outcomes.get(0) instanceof Outcome.Applied, "own id of " + id + ": " + outcomes.get(0));
                    }
                }
                assertEquals(1, applied[round], "Applied outcomes for " + id + " (round " + round + ")");
            }
        } finally {
            System.out.printf("%s: %d rounds on nodes 1 and 2 in %.1f s, errors seen and resent:%n%s", mode, ROUNDS,
                    (System.nanoTime() - began) / 1e9, errors.summary());
            closeAll(targets);
        }
        assertEquals(List.of(), errors.untyped(), "errors a caller may not retry");
        for (int node = 1; node <= GaleraCluster.NODES; node++) {
            Map<String, Long> tally = database.tally(node, INBOX);
            long ids = mode == Mode.APPLY_ALL ? 3L * ROUNDS : ROUNDS;
            assertEquals(Map.of("ids", ids, "total", ids, "repeated", 0L, "inboxRows", ids), tally, "node " + node);
        }
    }

    private Target target(int node, Mode mode) {
        Jdbi jdbi = database.pooled(node, 4, "");
        Inbox<Handle> inbox = MariaDbInbox.builder(jdbi).name(INBOX)
                .commitMode(mode == Mode.GROUP ? CommitMode.GROUP : CommitMode.PER_CALLER).build();
        return new Target(inbox, jdbi);
    }

    private static void closeAll(Target[] targets) {
        for (Target target : targets) {
            target.inbox().close();
        }
    }
}
