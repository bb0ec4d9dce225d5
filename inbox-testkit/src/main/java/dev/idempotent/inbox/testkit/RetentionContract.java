package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.InboxRetention;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.RetentionStatus;
import dev.idempotent.inbox.StaleMessageException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
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
import java.util.concurrent.locks.LockSupport;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The retention contract every adapter passes: purging old rows in batches, a persisted horizon
 * that only moves forward, and refusing resends too old to judge. Subclass it in the adapter's
 * tests and implement {@link #openFixture()}.
 */
public abstract class RetentionContract {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");
    private static final Duration RETENTION = Duration.ofDays(30);

    private InboxFixture fixture;
    private Stock stock;
    private MutableClock clock;
    private final List<Inbox<Handle>> opened = new ArrayList<>();

    /**
     * A fixture over a fresh, real database; closed after each test.
     *
     * @return the fixture
     * @throws Exception if the database cannot be prepared; the test fails
     */
    protected abstract InboxFixture openFixture() throws Exception;

    @BeforeEach
    void openDatabase() throws Exception {
        fixture = openFixture();
        stock = Stock.create(fixture.jdbi(), "warehouse");
        clock = new MutableClock(T0);
    }

    @AfterEach
    void closeDatabase() {
        opened.forEach(Inbox::close);
        fixture.close();
    }

    private Inbox<Handle> inbox(Clock clock) {
        Inbox<Handle> inbox = fixture.builder().name("warehouse").retention(RETENTION).clock(clock).build();
        opened.add(inbox);
        return inbox;
    }

    private Outcome<Integer> receive(Inbox<Handle> inbox, String id, long qty, Instant originTime) {
        return inbox.apply(id, Content.of(qty), originTime, tx -> stock.add(tx, qty));
    }

    private long rows() {
        return Stock.inboxRows(fixture, "warehouse");
    }

    /** Rows received at {@code receivedAt}, written straight into the inbox table. */
    private void insertRows(int count, Instant receivedAt) {
        inbox(clock).close(); // creates the schema
        fixture.insertReceivedRows("warehouse", "old-", count, receivedAt);
    }

    @Test
    void resendOfAPurgedIdWithItsOriginTimeIsRefusedAsStaleAndNewMessagesStillApply() {
        Inbox<Handle> inbox = inbox(clock);
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7, T0));
        clock.advance(RETENTION.plusDays(1));

        PurgeReport report = inbox.retention().purge();

        assertEquals(1, report.rowsPurged());
        assertEquals(clock.instant().minus(RETENTION), report.horizon());
        StaleMessageException stale = assertThrows(StaleMessageException.class, () -> receive(inbox, "snack-7", 7, T0));
        assertEquals("snack-7", stale.id());
        assertEquals(T0, stale.originTime());
        assertEquals(report.horizon(), stale.horizon());
        assertEquals(7, stock.total(), "the stale resend was not applied again");
        assertEquals(0, rows(), "nothing was written for it");

        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-8", 8, clock.instant()));
        assertEquals(15, stock.total());
        assertEquals(1, inbox.stats().stale());
        assertEquals(1, inbox.retention().status().staleRefusals());
    }

    @Test
    void listenerHearsEachFinishedPurgeWithItsReport() {
        List<PurgeReport> heard = new ArrayList<>();
        InboxListener listener = new InboxListener() {
            @Override
            public void onPurged(String inbox, PurgeReport report) {
                heard.add(report);
            }
        };
        Inbox<Handle> inbox = fixture.builder().name("warehouse").retention(RETENTION).clock(clock).listener(listener)
                .build();
        opened.add(inbox);
        receive(inbox, "snack-7", 7, null);
        receive(inbox, "snack-8", 8, null);
        clock.advance(RETENTION.plusDays(1));

        PurgeReport first = inbox.retention().purge();
        PurgeReport second = inbox.retention().purge();

        assertEquals(List.of(first, second), heard);
        assertEquals(2, first.rowsPurged());
        assertEquals(0, second.rowsPurged());
    }

    @Test
    void withoutAnOriginTimeAPurgedIdIsAppliedAgainWhichIsTheRiskTheOriginTimeCloses() {
        Inbox<Handle> inbox = inbox(clock);
        receive(inbox, "snack-7", 7, null);
        clock.advance(RETENTION.plusDays(1));
        inbox.retention().purge();

        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7, null));
        assertEquals(14, stock.total(), "counted twice: the inbox forgot the id and had no way to know");
    }

    @Test
    void idStillKeptIsADuplicateHoweverOldItsOriginTime() {
        Inbox<Handle> inbox = inbox(clock);
        receive(inbox, "snack-7", 7, T0);
        clock.advance(Duration.ofDays(40));
        receive(inbox, "snack-9", 9, clock.instant());
        clock.advance(Duration.ofDays(5));
        inbox.retention().purge(); // horizon = T0 + 15 days: snack-7 is gone, snack-9 kept

        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, "snack-9", 9, T0.plus(Duration.ofDays(40))));
        StaleMessageException stale = assertThrows(StaleMessageException.class,
                () -> receive(inbox, "snack-new", 1, T0.plus(Duration.ofDays(15))));
        assertEquals(T0.plus(Duration.ofDays(15)), stale.horizon());
        assertEquals(16, stock.total());
    }

    @Test
    void originTimesWithinTheSkewMarginOfTheHorizonAreRefused() {
        Inbox<Handle> inbox = fixture.builder().name("warehouse").retention(RETENTION)
                .clockSkewMargin(Duration.ofMinutes(10)).clock(clock).build();
        opened.add(inbox);
        clock.advance(RETENTION.plusDays(1));
        Instant horizon = inbox.retention().purge().horizon();

        // A sender's clock up to 10 minutes ahead could have stamped this after an earlier
        // delivery that was received just before the horizon.
        assertThrows(StaleMessageException.class, () -> receive(inbox, "edge", 1, horizon.plus(Duration.ofMinutes(9))));
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "edge", 1, horizon.plus(Duration.ofMinutes(10))));
    }

    @Test
    void purgeWithASubMillisecondCutoffKeepsARowReceivedAfterIt() {
        Inbox<Handle> inbox = inbox(clock);
        clock.advance(Duration.ofNanos(1_700_000));
        receive(inbox, "late", 1, null); // received at T0 + 1.7 ms
        clock.advance(RETENTION.minusNanos(200_000)); // cutoff T0 + 1.5 ms: before the receipt

        PurgeReport report = inbox.retention().purge();

        assertEquals(0, report.rowsPurged(), "the row was received after the cutoff");
        assertTrue(inbox.find("late").isPresent());
        assertTrue(!report.horizon().isAfter(T0.plusNanos(1_500_000)), "the horizon is no later than the cutoff");
        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, "late", 1, null), "its resend is a duplicate");
        assertEquals(1, stock.total());
    }

    @Test
    void purgeDeletesInBatchesOnlyWhatIsOlderThanTheRetention() {
        int old = InboxRetention.BATCH_SIZE * 2 + 500;
        insertRows(old, T0);
        clock.advance(RETENTION.plusDays(1));
        Inbox<Handle> inbox = inbox(clock);
        receive(inbox, "fresh", 1, clock.instant());

        PurgeReport report = inbox.retention().purge();

        assertEquals(old, report.rowsPurged());
        assertEquals(3, report.batches());
        assertEquals(1, rows(), "the fresh row is kept");
        assertEquals(Optional.of(Duration.ZERO), inbox.retention().status().oldestRowAge());
    }

    @Test
    void horizonSurvivesARestart() {
        Inbox<Handle> inbox = inbox(clock);
        receive(inbox, "snack-7", 7, T0);
        clock.advance(RETENTION.plusDays(1));
        Instant horizon = inbox.retention().purge().horizon();
        inbox.close();

        Inbox<Handle> restarted = inbox(clock);

        assertEquals(Optional.of(horizon), restarted.retention().status().horizon());
        assertThrows(StaleMessageException.class, () -> receive(restarted, "snack-7", 7, T0));
        assertEquals(7, stock.total());
    }

    @Test
    void horizonNeverMovesBackwardsEvenForAPurgerWithAnEarlierClock() {
        Inbox<Handle> late = inbox(new MutableClock(T0.plus(Duration.ofDays(60))));
        Inbox<Handle> early = inbox(new MutableClock(T0.plus(Duration.ofDays(40))));
        Instant lateHorizon = late.retention().purge().horizon();

        PurgeReport earlyReport = early.retention().purge();

        assertEquals(lateHorizon, earlyReport.horizon());
        assertEquals(Optional.of(lateHorizon), early.retention().status().horizon());
    }

    @Test
    void concurrentPurgersPurgeEachRowOnceAndLeaveTheLatestHorizon() throws Exception {
        insertRows(20_000, T0);
        int purgers = 4;
        List<Inbox<Handle>> inboxes = new ArrayList<>();
        for (int i = 0; i < purgers; i++) {
            // Inboxes of their own, with connections of their own, as separate processes would have.
            inboxes.add(inbox(new MutableClock(T0.plus(RETENTION).plus(Duration.ofDays(1 + i)))));
        }
        CyclicBarrier start = new CyclicBarrier(purgers);
        ExecutorService pool = Executors.newFixedThreadPool(purgers);
        try {
            List<Future<PurgeReport>> reports = new ArrayList<>();
            for (Inbox<Handle> inbox : inboxes) {
                reports.add(pool.submit(() -> {
                    start.await();
                    return inbox.retention().purge();
                }));
            }
            long purged = 0;
            for (Future<PurgeReport> report : reports) {
                purged += report.get(120, TimeUnit.SECONDS).rowsPurged();
            }
            assertEquals(20_000, purged, "every row purged exactly once between them");
        } finally {
            pool.shutdownNow();
        }
        assertEquals(Optional.of(T0.plus(Duration.ofDays(purgers))), inboxes.get(0).retention().status().horizon());
        assertEquals(0, rows());
    }

    /**
     * The number of old rows the purge-under-load scenario purges. A hundred batches of
     * {@link InboxRetention#BATCH_SIZE} already keep the appliers racing every batch boundary, which is
     * what the bound is about; a million rows proved the same bound at ten times the CI time.
     *
     * @return the number of old rows to purge
     */
    protected int purgeUnderLoadRows() {
        return 100 * InboxRetention.BATCH_SIZE;
    }

    @Test
    void purgeOfManyRowsNeverMakesConcurrentAppliesTimeOut() throws Exception {
        int oldRows = purgeUnderLoadRows();
        insertRows(oldRows, T0);
        clock.advance(RETENTION.plusDays(1));
        int threads = 4;
        AtomicBoolean purging = new AtomicBoolean(true);
        AtomicInteger applied = new AtomicInteger();
        AtomicInteger busy = new AtomicInteger();
        AtomicLong slowestNanos = new AtomicLong();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        Inbox<Handle> inbox = inbox(clock);
        try {
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

            System.out.printf("%s purge: %d rows in %d batches, %d ms, while %d threads applied %d messages;"
                            + " busy errors %d, slowest apply %d ms (busy timeout %d ms)%n",
                    getClass().getSimpleName(), report.rowsPurged(), report.batches(), purgeMillis, threads,
                    applied.get(), busy.get(), TimeUnit.NANOSECONDS.toMillis(slowestNanos.get()),
                    fixture.builder().settings().busyTimeout().toMillis());
            assertEquals(oldRows, report.rowsPurged());
            assertEquals(0, busy.get(), "no apply waited past the busy timeout");
            assertEquals(applied.get(), stock.total());
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
        Inbox<Handle> inbox = inbox(clock);
        assertEquals(Optional.empty(), inbox.retention().status().oldestRowAge());
        assertEquals(Optional.empty(), inbox.retention().status().horizon());
        receive(inbox, "snack-7", 7, T0);
        clock.advance(Duration.ofDays(3));

        assertEquals(Optional.of(Duration.ofDays(3)), inbox.retention().status().oldestRowAge());
    }

    @Test
    void scheduledPurgeRunsWithoutBeingCalled() throws Exception {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            Inbox<Handle> inbox = inbox(clock);
            receive(inbox, "snack-7", 7, T0);
            clock.advance(RETENTION.plusDays(1));

            Duration period = Duration.ofMillis(5);
            ScheduledFuture<?> schedule = inbox.retention().schedulePurge(scheduler, period);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (inbox.retention().status().rowsPurged() == 0 && System.nanoTime() < deadline) {
                // Purging has no listener hook to count down a latch, so poll; more often than the
                // purge itself runs would only add queries.
                LockSupport.parkNanos(period.toNanos());
            }
            schedule.cancel(false);

            assertEquals(1, inbox.retention().status().rowsPurged());
            assertEquals(0, rows());
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void purgeOfAnEmptyInboxSetsTheHorizon() {
        Inbox<Handle> inbox = inbox(clock);

        PurgeReport report = inbox.retention().purge();

        assertEquals(0, report.rowsPurged());
        assertEquals(1, report.batches());
        assertEquals(T0.minus(RETENTION), report.horizon());
    }
}
