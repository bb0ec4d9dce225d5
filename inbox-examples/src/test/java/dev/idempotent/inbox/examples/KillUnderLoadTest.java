package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.crash.ChildJvm;
import dev.idempotent.inbox.examples.crash.StockView;
import dev.idempotent.inbox.examples.publisher.Attempt;
import dev.idempotent.inbox.examples.publisher.DeliveryListener;
import dev.idempotent.inbox.examples.publisher.DeliveryReport;
import dev.idempotent.inbox.examples.publisher.Enqueued;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.Outbox;
import dev.idempotent.inbox.examples.publisher.Publisher;
import dev.idempotent.inbox.examples.publisher.PublisherSettings;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} under load: a real {@code serve} process on a SQLite file is killed with
 * {@code destroyForcibly} at random moments while a publisher streams a few thousand items, then
 * started again on the same file and port; the publisher never stops and drains its outbox. Resends
 * come from the kills, from the lost-ACK switch, and a third of the ids are enqueued a second time.
 *
 * <p>At every kill, and at the end of every run, the files are read through independent
 * connections: every id the publisher marked acked is in the inbox, and the total is the sum of
 * the quantities of the ids in the inbox. At the end every item is acked (none pending, exhausted
 * or rejected) and the total counts each distinct id exactly once.
 *
 * <p>The kill moments and quantities come from a seed that is printed; rerun one with
 * {@code -Dinbox.killUnderLoad.seed=N}.
 */
class KillUnderLoadTest {

    private static final int RUNS = 3;
    private static final int ITEMS = 1500;
    private static final int KILLS_PER_RUN = 2;
    private static final double DROP_ACK_RATE = 0.15;
    private static final int WINDOW = 16;
    private static final Duration TIMEOUT = Duration.ofSeconds(300);
    private static final Pattern URL = Pattern.compile("http://127\\.0\\.0\\.1:(\\d+)");

    @TempDir
    Path dir;

    @Test
    void serveKilledUnderLoadLosesNothingAndAppliesNothingTwice() throws Exception {
        long seed = Long.getLong("inbox.killUnderLoad.seed", System.nanoTime());
        System.out.printf("[kill-under-load] seed %d: %d runs of %d items, %d kills each, drop-ack rate %.2f, window %d%n",
                seed, RUNS, ITEMS, KILLS_PER_RUN, DROP_ACK_RATE, WINDOW);
        Random seeds = new Random(seed);
        List<RunResult> results = new ArrayList<>();
        for (int run = 1; run <= RUNS; run++) {
            results.add(run(run, seeds.nextLong()));
        }
        System.out.printf("[kill-under-load] summary: %d runs, %d items, %d attempts, %d resends, %d kills, %d lost,"
                        + " %d double-applied, every final total as expected%n",
                RUNS, results.stream().mapToInt(RunResult::items).sum(), results.stream().mapToInt(RunResult::attempts).sum(),
                results.stream().mapToInt(RunResult::resends).sum(), results.stream().mapToInt(RunResult::kills).sum(),
                results.stream().mapToLong(RunResult::lost).sum(), results.stream().mapToLong(RunResult::doubled).sum());
    }

    private RunResult run(int run, long runSeed) throws Exception {
        Path runDir = Files.createDirectories(dir.resolve("run-" + run));
        Path db = runDir.resolve("warehouse.db");
        Path outboxFile = runDir.resolve("outbox.db");
        Random random = new Random(runSeed);
        long started = System.nanoTime();

        Map<String, Integer> qty = new HashMap<>();
        List<Outbox.Item> items = new ArrayList<>();
        for (int i = 0; i < ITEMS; i++) {
            int q = 1 + random.nextInt(50);
            qty.put("parcel-" + i, q);
            items.add(new Outbox.Item("parcel-" + i, q));
        }
        long expectedTotal = sum(qty, qty.keySet());
        List<Outbox.Item> again = new ArrayList<>();
        for (int i = 0; i < ITEMS / 3; i++) {
            again.add(items.get(random.nextInt(ITEMS)));
        }
        // Kill when the publisher has marked this many items acked: random, apart, and well inside the run.
        List<Integer> killAt = new ArrayList<>(new TreeSet<>(List.of(
                ITEMS / 10 + random.nextInt(ITEMS * 3 / 10), ITEMS / 2 + random.nextInt(ITEMS * 3 / 10))));
        assertEquals(KILLS_PER_RUN, killAt.size());

        List<CountDownLatch> killMoments = new ArrayList<>();
        killAt.forEach(at -> killMoments.add(new CountDownLatch(1)));
        AtomicInteger acked = new AtomicInteger();
        DeliveryListener listener = (Attempt attempt) -> {
            if (attempt.state() == ItemState.ACKED) {
                int n = acked.incrementAndGet();
                for (int k = 0; k < killAt.size(); k++) {
                    if (n == killAt.get(k)) {
                        killMoments.get(k).countDown();
                    }
                }
            }
        };

        ExecutorService publisherThread = Executors.newSingleThreadExecutor();
        List<Serve> incarnations = new ArrayList<>();
        List<Long> restartMillis = new ArrayList<>();
        try (Outbox outbox = Outbox.open(outboxFile)) {
            try {
                outbox.enqueueAll(items);
                Serve serve = Serve.start(runDir, db, 0, runSeed);
                incarnations.add(serve);
                int port = serve.port;
                PublisherSettings settings = PublisherSettings.to(serve.uri)
                        .withWindow(WINDOW)
                        .withMaxAttempts(1000)
                        .withBackoff(Duration.ofMillis(500), Duration.ofSeconds(4))
                        .withJitterSeed(runSeed);
                Future<DeliveryReport> delivery = publisherThread.submit(
                        () -> new Publisher(outbox, settings, listener).deliverPending());

                int alreadyEnqueued = 0;
                for (int k = 0; k < killAt.size(); k++) {
                    assertTrue(killMoments.get(k).await(TIMEOUT.toSeconds(), TimeUnit.SECONDS),
                            "run " + run + ": " + killAt.get(k) + " items acked before kill " + (k + 1));
                    serve.jvm.kill();
                    checkAtKill(run, k + 1, db, outboxFile, qty);
                    // The same port, so that the running publisher finds the warehouse again.
                    long restart = System.nanoTime();
                    serve = Serve.start(runDir, db, port, runSeed + k + 1);
                    restartMillis.add((System.nanoTime() - restart) / 1_000_000);
                    incarnations.add(serve);
                    if (k == 0) {
                        // A third of the ids again, while delivery runs: the outbox keeps one item per id.
                        List<Enqueued> results = outbox.enqueueAll(again);
                        alreadyEnqueued = (int) results.stream().filter(r -> r == Enqueued.ALREADY_ENQUEUED).count();
                    }
                }
                DeliveryReport report = delivery.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                serve.jvm.kill();
                RunResult result = checkEnd(run, runSeed, db, outboxFile, qty, expectedTotal, report, killAt,
                        again.size(), alreadyEnqueued);
                System.out.printf("[kill-under-load] run %d took %d ms; the restarted warehouse listened after %s ms%n",
                        run, (System.nanoTime() - started) / 1_000_000, restartMillis);
                return result;
            } finally {
                publisherThread.shutdownNow();
                publisherThread.awaitTermination(30, TimeUnit.SECONDS);
                incarnations.forEach(serve -> serve.jvm.close());
            }
        }
    }

    /** With the warehouse dead and its file still: nothing acked is missing, nothing counted twice. */
    private static void checkAtKill(int run, int kill, Path db, Path outboxFile, Map<String, Integer> qty) {
        Set<String> ackedIds = ackedIds(outboxFile);
        StockView.Snapshot stock = StockView.read(db, SqliteWarehouse.INBOX);
        Set<String> lost = new TreeSet<>(ackedIds);
        lost.removeAll(stock.ids());
        long expected = sum(qty, stock.ids());
        System.out.printf("[kill-under-load] run %d kill %d: %d acked in the outbox, %d rows in the inbox,"
                        + " acked but not in the inbox %d, total %d (sum over the inbox's ids %d)%n",
                run, kill, ackedIds.size(), stock.rows(), lost.size(), stock.total(), expected);
        assertEquals(Set.of(), lost, "acked ids missing from the inbox at kill " + kill);
        assertEquals(expected, stock.total(), "the total counts each id in the inbox once at kill " + kill);
    }

    private static RunResult checkEnd(int run, long runSeed, Path db, Path outboxFile, Map<String, Integer> qty,
            long expectedTotal, DeliveryReport report, List<Integer> killAt, int again, int alreadyEnqueued) {
        Map<String, Long> states = statesIn(outboxFile);
        Set<String> ackedIds = ackedIds(outboxFile);
        StockView.Snapshot stock = StockView.read(db, SqliteWarehouse.INBOX);
        Set<String> lost = new TreeSet<>(qty.keySet());
        lost.removeAll(stock.ids());
        Set<String> ackedNotInInbox = new HashSet<>(ackedIds);
        ackedNotInInbox.removeAll(stock.ids());
        long doubled = stock.total() - sum(qty, stock.ids());
        System.out.printf("[kill-under-load] run %d (seed %d): %d items (%d enqueued again, %d already enqueued),"
                        + " attempts %d, resends %d, duplicates confirmed %d, kills %d (at %s acked);"
                        + " outbox %s; inbox rows %d; lost %d, double-applied %d; final total %d (expected %d)%n",
                run, runSeed, ITEMS, again, alreadyEnqueued, report.attempts(), report.resends(),
                report.duplicatesConfirmed(), killAt.size(), killAt, states, stock.rows(), lost.size() + ackedNotInInbox.size(),
                doubled, stock.total(), expectedTotal);

        assertEquals(again, alreadyEnqueued, "enqueueing an id again adds nothing");
        assertEquals(Map.of("acked", (long) ITEMS), states, "every item ends acked: none pending, exhausted or rejected");
        assertEquals(ITEMS, report.acked(), report.toString());
        assertTrue(report.settled(), report.toString());
        assertEquals(Set.of(), ackedNotInInbox, "every acked id is in the inbox");
        assertEquals(Set.of(), lost, "no item lost");
        assertEquals(qty.keySet(), stock.ids(), "one inbox row per distinct id, and nothing else");
        assertEquals(0, doubled, "nothing applied twice");
        assertEquals(expectedTotal, stock.total(), "total = sum of qty over distinct ids");
        return new RunResult(ITEMS, report.attempts(), report.resends(), killAt.size(), lost.size(), doubled);
    }

    private static long sum(Map<String, Integer> qty, Set<String> ids) {
        return ids.stream().mapToLong(qty::get).sum();
    }

    /** The ids the publisher marked acked, read through a connection of this test's own. */
    private static Set<String> ackedIds(Path outboxFile) {
        return new HashSet<>(outboxJdbi(outboxFile).withHandle(handle -> handle
                .createQuery("SELECT id FROM outbox_item WHERE state = 'acked'").mapTo(String.class).list()));
    }

    private static Map<String, Long> statesIn(Path outboxFile) {
        Map<String, Long> states = new HashMap<>();
        outboxJdbi(outboxFile).useHandle(handle -> handle
                .createQuery("SELECT state, COUNT(*) AS n FROM outbox_item GROUP BY state")
                .map((rs, ctx) -> Map.entry(rs.getString("state"), rs.getLong("n")))
                .forEach(entry -> states.put(entry.getKey(), entry.getValue())));
        return states;
    }

    private static Jdbi outboxJdbi(Path outboxFile) {
        return Jdbi.create("jdbc:sqlite:" + outboxFile.toAbsolutePath());
    }

    /** One incarnation of {@code serve} in a child JVM, listening. */
    private static final class Serve {
        final ChildJvm jvm;
        final URI uri;
        final int port;

        private Serve(ChildJvm jvm, URI uri, int port) {
            this.jvm = jvm;
            this.uri = uri;
            this.port = port;
        }

        /** Starts {@code serve} on {@code db} and {@code port} (0: an ephemeral one); returns once it listens. */
        static Serve start(Path runDir, Path db, int port, long ackSeed) {
            List<String> jvmOptions = new ArrayList<>(ChildJvm.FAST_START);
            // A killed JVM cannot delete sqlite-jdbc's unpacked native library; keep it in the test's directory.
            jvmOptions.add("-Dorg.sqlite.tmpdir=" + runDir);
            ChildJvm jvm = ChildJvm.start("serve", jvmOptions, Main.class.getName(), List.of("serve",
                    "--db", db.toString(), "--port", Integer.toString(port),
                    "--drop-ack-rate", Double.toString(DROP_ACK_RATE), "--seed", Long.toString(ackSeed)));
            try {
                String line = jvm.awaitLine(l -> l.startsWith("warehouse listening on "), TIMEOUT);
                Matcher url = URL.matcher(line);
                assertTrue(url.find(), line);
                return new Serve(jvm, URI.create(url.group()), Integer.parseInt(url.group(1)));
            } catch (RuntimeException | AssertionError e) {
                jvm.close();
                throw e;
            }
        }
    }

    private record RunResult(int items, int attempts, int resends, int kills, long lost, long doubled) {}
}
