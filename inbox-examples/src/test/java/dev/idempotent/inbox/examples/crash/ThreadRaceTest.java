package dev.idempotent.inbox.examples.crash;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Kind;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Sixteen threads deliver the same ids at the same moment: a barrier releases all of them for
 * each id, and a quarter of them offer a different quantity, so duplicates and conflicts race the
 * first delivery.
 */
class ThreadRaceTest {

    static final int THREADS = 16;
    static final int IDS = 60;

    /** Whether the threads share one inbox (queued in this process) or each have their own connection. */
    enum Sharing {
        /** One inbox: the threads queue on its write lock in this process. */
        ONE_INBOX,
        /** An inbox, a Jdbi and a connection per thread: they meet only at SQLite's file lock. */
        INBOX_PER_THREAD
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Sharing.class)
    void sixteenThreadsDeliveringTheSameIdsApplyEachOnce(Sharing sharing, @TempDir Path dir) throws Exception {
        Path db = dir.resolve("race.db");
        Jdbi setup = SqliteInbox.jdbi(db);
        setup.useHandle(handle -> {
            handle.execute(CrashReceiver.CREATE_STOCK);
            handle.execute(CrashReceiver.SEED_STOCK);
        });
        List<SqliteInbox> inboxes = new ArrayList<>();
        for (int i = 0; i < (sharing == Sharing.ONE_INBOX ? 1 : THREADS); i++) {
            // A long busy timeout: in a race a wait is expected; a busy failure here would be a finding.
            inboxes.add(SqliteInbox.builder(SqliteInbox.jdbi(db)).name(CrashReceiver.INBOX)
                    .busyTimeout(Duration.ofSeconds(30)).build());
        }

        RaceLedger ledger = new RaceLedger();
        AtomicLong effectRuns = new AtomicLong();
        CyclicBarrier everyId = new CyclicBarrier(THREADS);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                SqliteInbox inbox = inboxes.get(sharing == Sharing.ONE_INBOX ? 0 : t);
                threads.add(pool.submit(() -> {
                    for (int i = 0; i < IDS; i++) {
                        String id = "race-" + i;
                        long qty = qty(i, thread);
                        everyId.await(1, TimeUnit.MINUTES);
                        ledger.add("thread-" + thread, id, qty, deliver(inbox, id, qty, effectRuns));
                    }
                    return null;
                }));
            }
            for (Future<?> thread : threads) {
                thread.get(5, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
            inboxes.forEach(SqliteInbox::close);
        }

        String counts = ledger.verify(StockView.read(db), IDS, effectRuns.get());
        System.out.printf("[thread-race] %s: %d threads x %d ids, released together per id by a barrier: %s%n",
                sharing, THREADS, IDS, counts);
    }

    /** The quantity a thread offers for id number {@code i}: most agree, every fourth differs. */
    static long qty(int i, int deliverer) {
        long agreed = 1 + i % 9;
        return (i + deliverer) % 4 == 0 ? agreed + 100 : agreed;
    }

    private static Kind deliver(SqliteInbox inbox, String id, long qty, AtomicLong effectRuns) {
        try {
            Outcome<Integer> outcome = inbox.apply(id, Content.of(qty), tx -> {
                effectRuns.incrementAndGet();
                return tx.execute(CrashReceiver.ADD_TO_STOCK, qty);
            });
            return outcome.fold(applied -> Kind.APPLIED, duplicate -> Kind.DUPLICATE, conflict -> Kind.CONFLICT);
        } catch (RuntimeException e) {
            // Counted as a failure, never as an outcome; the ledger fails the test for it.
            return Kind.FAILED;
        }
    }
}
