package dev.idempotent.inbox.mariadb.galera;

import static org.junit.jupiter.api.Assertions.assertAll;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Writers spread over the three nodes deliver every id three times, each copy through another
 * node at about the same moment, while one node is killed with {@code kill -9} halfway and
 * restarted. Each writer calls the inbox one way ({@code apply}, {@code applyAll} in batches, group
 * commit, or joined calls), the four ways on every node, and resends after every error, moving to
 * the next node as a client behind a load balancer would. Every id must be applied exactly once,
 * the qty total must be exact on every node, and every error a caller saw must be one it may retry.
 *
 * <p>{@code inbox.galera.soak.ids} sets the ids per writer: 200 by default, a short run; the full
 * one is 10,000 ({@code -Dinbox.galera.soak.ids=10000}).
 */
@OnGalera
class GaleraSoakTest {

    private static final String INBOX = "soak";
    private static final int WRITERS = 16;
    private static final int COPIES = 3;
    private static final int BATCH = 6;
    private static final int IDS = Integer.getInteger("inbox.galera.soak.ids", 200);
    private static final int KILLED = 2;

    private final GaleraDatabase database = new GaleraDatabase();
    private final ExecutorService threads = Executors.newFixedThreadPool(WRITERS + 1);
    private final List<Inbox<Handle>> inboxes = new ArrayList<>();

    @AfterEach
    void close() throws InterruptedException {
        threads.shutdownNow();
        assertTrue(threads.awaitTermination(60, TimeUnit.SECONDS));
        inboxes.forEach(Inbox::close);
        database.close();
    }

    @Test
    void everyIdIsAppliedOnceThoughANodeIsKilledMidway(GaleraCluster cluster) throws Exception {
        Target[][] targets = new Target[GaleraCluster.NODES + 1][];
        for (int node = 1; node <= GaleraCluster.NODES; node++) {
            Jdbi jdbi = database.pooled(node, WRITERS, "");
            targets[node] = new Target[Mode.values().length];
            for (Mode mode : Mode.values()) {
                MariaDbInbox inbox = MariaDbInbox.builder(jdbi).name(INBOX)
                        .commitMode(mode == Mode.GROUP ? CommitMode.GROUP : CommitMode.PER_CALLER).build();
                inboxes.add(inbox);
                targets[node][mode.ordinal()] = new Target(inbox, jdbi);
            }
        }
        CallerErrors errors = new CallerErrors();
        LongAdder applied = new LongAdder();
        Set<String> appliedIds = ConcurrentHashMap.newKeySet();
        long deliveries = (long) WRITERS * IDS * COPIES;
        CountDownLatch halfway = new CountDownLatch((int) (deliveries / 2));
        long began = System.nanoTime();

        Future<String> crash = threads.submit(() -> {
            assertTrue(halfway.await(30, TimeUnit.MINUTES), "the writers never got halfway");
            long killedAt = System.nanoTime();
            cluster.kill(KILLED);
            cluster.restart(KILLED);
            return String.format("node %d killed at %.1f s, rejoined %.1f s later", KILLED, (killedAt - began) / 1e9,
                    (System.nanoTime() - killedAt) / 1e9);
        });
        List<Future<?>> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            Mode mode = Mode.values()[writer % Mode.values().length];
            int home = writer % GaleraCluster.NODES;
            writers.add(threads.submit(() -> {
                Calls calls = new Calls(mode, errors);
                List<Message> batch = new ArrayList<>();
                for (int i = 0; i < IDS; i++) {
                    for (int copy = 0; copy < COPIES; copy++) {
                        // the copies of an id come from writers on three different nodes
                        int owner = (writer + 5 * copy) % WRITERS;
                        batch.add(Message.of("o" + owner + "-" + i, Content.of(qty(owner, i))));
                        if (batch.size() == (mode == Mode.APPLY_ALL ? BATCH : 1)) {
                            for (Outcome<Integer> outcome : calls.deliver(batch,
                                    attempt -> targets[(home + attempt) % GaleraCluster.NODES + 1][mode.ordinal()])) {
                                if (outcome instanceof Outcome.Applied<Integer> a) {
                                    applied.increment();
                                    appliedIds.add(a.id());
                                }
                                halfway.countDown();
                            }
                            batch.clear();
                        }
                    }
                }
                assertTrue(batch.isEmpty(), "IDS * COPIES is a multiple of the batch");
                return null;
            }));
        }
        String crashed = "node " + KILLED + " not killed";
        try {
            for (Future<?> writer : writers) {
                writer.get(60, TimeUnit.MINUTES);
            }
            crashed = crash.get(10, TimeUnit.MINUTES);
        } finally {
            System.out.printf("soak: %d writers, %d ids each delivered %d times (%d deliveries) in %.1f s; %s;"
                    + " %d Applied, %d outcome unknown; errors seen and resent:%n%s", WRITERS, IDS, COPIES, deliveries,
                    (System.nanoTime() - began) / 1e9, crashed, applied.sum(), errors.outcomeUnknown(),
                    errors.summary());
        }
        long ids = (long) WRITERS * IDS;
        long sum = 0;
        for (int owner = 0; owner < WRITERS; owner++) {
            for (int i = 0; i < IDS; i++) {
                sum += qty(owner, i);
            }
        }
        long expectedTotal = sum;

        // ids applied without an Applied outcome for any caller, with the errors their deliveries met
        List<String> unreported = new ArrayList<>();
        for (int owner = 0; owner < WRITERS; owner++) {
            for (int i = 0; i < IDS; i++) {
                String id = "o" + owner + "-" + i;
                if (!appliedIds.contains(id) && !errors.outcomeUnknown(id)) {
                    unreported.add(id + ": " + errors.history(id));
                }
            }
        }

        List<Executable> checks = new ArrayList<>();
        for (int node = 1; node <= GaleraCluster.NODES; node++) {
            Map<String, Long> tally = database.tally(node, INBOX);
            String name = "node " + node;
            checks.add(() -> assertEquals(Map.of("ids", ids, "total", expectedTotal, "repeated", 0L, "inboxRows", ids),
                    tally, name));
        }
        // An id whose commit's outcome was unknown may be Applied to nobody (its resend is a
        // duplicate); any other id was reported Applied to one caller.
        checks.add(() -> assertEquals(List.of(), unreported.stream().limit(20).toList(),
                "ids applied, but Applied to no caller and never told their outcome was unknown"));
        checks.add(() -> assertEquals(appliedIds.size(), applied.sum(), "Applied outcomes: no id was Applied twice"));
        checks.add(() -> assertEquals(List.of(), errors.untyped(), "errors a caller may not retry"));
        assertAll(checks);
    }

    private static long qty(int owner, int i) {
        return owner + 1 + i;
    }
}
