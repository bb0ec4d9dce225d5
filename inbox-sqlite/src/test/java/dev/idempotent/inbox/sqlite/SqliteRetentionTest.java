package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.RetentionStatus;
import dev.idempotent.inbox.StaleMessageException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Purging old rows without re-applying resends too old to judge. */
class SqliteRetentionTest {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");
    private static final Duration RETENTION = Duration.ofDays(30);

    @TempDir
    Path directory;

    private Path file;
    private Jdbi jdbi;
    private MutableClock clock;

    @BeforeEach
    void createStock() {
        file = directory.resolve("warehouse.db");
        jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> {
            handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
            handle.execute("INSERT INTO stock VALUES (1, 0)");
        });
        clock = new MutableClock(T0);
    }

    private SqliteInbox inbox(Clock clock) {
        return SqliteInbox.builder(file).name("warehouse").retention(RETENTION).clock(clock).build();
    }

    private static Outcome<Integer> receive(SqliteInbox inbox, String id, long qty, Instant originTime) {
        return inbox.apply(id, Content.of(qty), originTime,
                tx -> tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty));
    }

    private long total() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
    }

    private long rows() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM inbox_message").mapTo(Long.class).one());
    }

    @Test
    void resendOfAPurgedIdWithItsOriginTimeIsRefusedAsStaleAndNewMessagesStillApply() {
        try (SqliteInbox inbox = inbox(clock)) {
            assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7, T0));
            clock.advance(RETENTION.plusDays(1));

            PurgeReport report = inbox.retention().purge();

            assertEquals(1, report.rowsPurged());
            assertEquals(clock.instant().minus(RETENTION), report.horizon());
            StaleMessageException stale =
                    assertThrows(StaleMessageException.class, () -> receive(inbox, "snack-7", 7, T0));
            assertEquals("snack-7", stale.id());
            assertEquals(T0, stale.originTime());
            assertEquals(report.horizon(), stale.horizon());
            assertEquals(7, total(), "the stale resend was not applied again");
            assertEquals(0, rows(), "nothing was written for it");

            assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-8", 8, clock.instant()));
            assertEquals(15, total());
            assertEquals(1, inbox.stats().stale());
            assertEquals(1, inbox.retention().status().staleRefusals());
        }
    }

    @Test
    void withoutAnOriginTimeAPurgedIdIsAppliedAgainWhichIsTheRiskTheOriginTimeCloses() {
        try (SqliteInbox inbox = inbox(clock)) {
            receive(inbox, "snack-7", 7, null);
            clock.advance(RETENTION.plusDays(1));
            inbox.retention().purge();

            assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7, null));
            assertEquals(14, total(), "counted twice: the inbox forgot the id and had no way to know");
        }
    }

    @Test
    void idStillKeptIsADuplicateHoweverOldItsOriginTime() {
        try (SqliteInbox inbox = inbox(clock)) {
            receive(inbox, "snack-7", 7, T0);
            clock.advance(Duration.ofDays(40));
            receive(inbox, "snack-9", 9, clock.instant());
            clock.advance(Duration.ofDays(5));
            inbox.retention().purge(); // horizon = T0 + 15 days: snack-7 is gone, snack-9 kept

            assertInstanceOf(Outcome.Duplicate.class, receive(inbox, "snack-9", 9, T0.plus(Duration.ofDays(40))));
            StaleMessageException stale = assertThrows(StaleMessageException.class,
                    () -> receive(inbox, "snack-new", 1, T0.plus(Duration.ofDays(15))));
            assertEquals(T0.plus(Duration.ofDays(15)), stale.horizon());
            assertEquals(16, total());
        }
    }

    @Test
    void originTimesWithinTheSkewMarginOfTheHorizonAreRefused() {
        try (SqliteInbox inbox = SqliteInbox.builder(file).name("warehouse").retention(RETENTION)
                .clockSkewMargin(Duration.ofMinutes(10)).clock(clock).build()) {
            clock.advance(RETENTION.plusDays(1));
            Instant horizon = inbox.retention().purge().horizon();

            // A sender's clock up to 10 minutes ahead could have stamped this after an earlier
            // delivery that we received just before the horizon.
            assertThrows(StaleMessageException.class,
                    () -> receive(inbox, "edge", 1, horizon.plus(Duration.ofMinutes(9))));
            assertInstanceOf(Outcome.Applied.class, receive(inbox, "edge", 1, horizon.plus(Duration.ofMinutes(10))));
        }
    }

    @Test
    void horizonSurvivesARestart() {
        Instant horizon;
        try (SqliteInbox inbox = inbox(clock)) {
            receive(inbox, "snack-7", 7, T0);
            clock.advance(RETENTION.plusDays(1));
            horizon = inbox.retention().purge().horizon();
        }

        try (SqliteInbox restarted = inbox(clock)) {
            assertEquals(Optional.of(horizon), restarted.retention().status().horizon());
            assertThrows(StaleMessageException.class, () -> receive(restarted, "snack-7", 7, T0));
            assertEquals(7, total());
        }
    }

    @Test
    void horizonNeverMovesBackwardsEvenForAPurgerWithAnEarlierClock() {
        MutableClock late = new MutableClock(T0.plus(Duration.ofDays(60)));
        MutableClock early = new MutableClock(T0.plus(Duration.ofDays(40)));
        try (SqliteInbox lateInbox = inbox(late); SqliteInbox earlyInbox = inbox(early)) {
            Instant lateHorizon = lateInbox.retention().purge().horizon();

            PurgeReport earlyReport = earlyInbox.retention().purge();

            assertEquals(lateHorizon, earlyReport.horizon());
            assertEquals(Optional.of(lateHorizon), earlyInbox.retention().status().horizon());
        }
    }

    @Test
    void concurrentPurgersLeaveTheLaterHorizon() throws Exception {
        insertOldRows(20_000, T0);
        MutableClock late = new MutableClock(T0.plus(Duration.ofDays(60)));
        MutableClock early = new MutableClock(T0.plus(Duration.ofDays(40)));
        CyclicBarrier start = new CyclicBarrier(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        // Two inboxes on two connections, as two processes would have.
        try (SqliteInbox lateInbox = inbox(late); SqliteInbox earlyInbox = inbox(early)) {
            Future<PurgeReport> first = pool.submit(() -> {
                start.await();
                return lateInbox.retention().purge();
            });
            Future<PurgeReport> second = pool.submit(() -> {
                start.await();
                return earlyInbox.retention().purge();
            });
            long purged = first.get(120, TimeUnit.SECONDS).rowsPurged() + second.get(120, TimeUnit.SECONDS).rowsPurged();

            assertEquals(20_000, purged, "every row purged exactly once between them");
            assertEquals(Optional.of(late.instant().minus(RETENTION)), lateInbox.retention().status().horizon());
            assertEquals(0, rows());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void purgeOfAMillionRowsNeverMakesConcurrentAppliesTimeOut() throws Exception {
        int oldRows = 1_000_000;
        insertOldRows(oldRows, T0);
        clock.advance(RETENTION.plusDays(1));
        int threads = 4;
        AtomicBoolean purging = new AtomicBoolean(true);
        AtomicInteger applied = new AtomicInteger();
        AtomicInteger busy = new AtomicInteger();
        AtomicLong slowestNanos = new AtomicLong();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (SqliteInbox inbox = inbox(clock)) {
            List<Future<?>> appliers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                appliers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; purging.get() || i < 20; i++) {
                        long began = System.nanoTime();
                        try {
                            receive(inbox, "new-" + thread + "-" + i, 1, clock.instant());
                            applied.incrementAndGet();
                        } catch (InboxBusyException e) {
                            busy.incrementAndGet();
                        }
                        slowestNanos.accumulateAndGet(System.nanoTime() - began, Math::max);
                    }
                    return null;
                }));
            }
            start.await();
            long began = System.nanoTime();
            PurgeReport report;
            try {
                report = inbox.retention().purge();
            } finally {
                purging.set(false);
            }
            long purgeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
            for (Future<?> applier : appliers) {
                applier.get(120, TimeUnit.SECONDS);
            }

            System.out.printf("purge: %d rows in %d batches, %d ms, while %d threads applied %d messages;"
                            + " busy errors %d, slowest apply %d ms (busy timeout %d ms)%n",
                    report.rowsPurged(), report.batches(), purgeMillis, threads, applied.get(), busy.get(),
                    TimeUnit.NANOSECONDS.toMillis(slowestNanos.get()), inbox.settings().busyTimeout().toMillis());
            assertEquals(oldRows, report.rowsPurged());
            assertEquals(0, busy.get(), "no apply waited past the busy timeout");
            assertEquals(applied.get(), total());
            assertEquals(applied.get(), rows(), "only the new rows remain");
            RetentionStatus status = inbox.retention().status();
            assertEquals(oldRows, status.rowsPurged());
            assertTrue(status.oldestRowAge().orElseThrow().compareTo(Duration.ofSeconds(1)) < 0);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void statusReportsTheOldestRowAge() {
        try (SqliteInbox inbox = inbox(clock)) {
            assertEquals(Optional.empty(), inbox.retention().status().oldestRowAge());
            assertEquals(Optional.empty(), inbox.retention().status().horizon());
            receive(inbox, "snack-7", 7, T0);
            clock.advance(Duration.ofDays(3));

            assertEquals(Optional.of(Duration.ofDays(3)), inbox.retention().status().oldestRowAge());
        }
    }

    @Test
    void scheduledPurgeRunsWithoutBeingCalled() throws Exception {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try (SqliteInbox inbox = inbox(clock)) {
            receive(inbox, "snack-7", 7, T0);
            clock.advance(RETENTION.plusDays(1));

            ScheduledFuture<?> schedule = inbox.retention().schedulePurge(scheduler, Duration.ofMillis(5));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (inbox.retention().status().rowsPurged() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            schedule.cancel(false);

            assertEquals(1, inbox.retention().status().rowsPurged());
            assertEquals(0, rows());
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void fixedClockPurgeOfAnEmptyInboxSetsTheHorizon() {
        Clock fixed = Clock.fixed(T0, ZoneOffset.UTC);
        try (SqliteInbox inbox = inbox(fixed)) {
            PurgeReport report = inbox.retention().purge();

            assertEquals(0, report.rowsPurged());
            assertEquals(1, report.batches());
            assertEquals(T0.minus(RETENTION), report.horizon());
        }
    }

    /** Rows as if received at {@code receivedAt}, written in one transaction for speed. */
    private void insertOldRows(int count, Instant receivedAt) {
        SqliteInbox.create(jdbi).close(); // creates the schema
        byte[] digest = Content.of(1).fingerprint().digest();
        jdbi.useTransaction(handle -> {
            PreparedBatch batch = handle.prepareBatch("INSERT INTO inbox_message (inbox, id, fingerprint_algorithm,"
                    + " content_type, content_type_version, fingerprint, content, received_at)"
                    + " VALUES ('warehouse', ?, 1, 'inbox.int64', 1, ?, NULL, ?)");
            for (int i = 0; i < count; i++) {
                batch.add("old-" + i, digest, receivedAt.toEpochMilli());
                if (batch.size() == 10_000) {
                    batch.execute();
                }
            }
            if (batch.size() > 0) {
                batch.execute();
            }
        });
    }
}
