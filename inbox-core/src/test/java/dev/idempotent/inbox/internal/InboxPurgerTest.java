package dev.idempotent.inbox.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.InboxRetention;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.RetentionStatus;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.testing.InMemoryDatabase;
import dev.idempotent.inbox.testing.InMemoryDatabase.PurgeCall;
import dev.idempotent.inbox.testing.MutableClock;
import dev.idempotent.inbox.testing.TestInbox;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link InboxPurger} over the in-memory store: what it deletes, in which batches, and the horizon it leaves. */
class InboxPurgerTest {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");
    private static final Duration RETENTION = Duration.ofDays(30);
    private static final int BATCH = InboxRetention.BATCH_SIZE;

    private final InMemoryDatabase database = new InMemoryDatabase();
    private final MutableClock clock = new MutableClock(T0);
    private final List<TestInbox> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(TestInbox::close);
    }

    private TestInbox inbox(Clock clock) {
        TestInbox inbox = TestInbox.builderWithGroupCommit(database)
                .name("warehouse").retention(RETENTION).clock(clock).build();
        opened.add(inbox);
        return inbox;
    }

    private static Outcome<Long> receive(TestInbox inbox, String id, Instant originTime) {
        return inbox.apply(id, Content.of(1), originTime, tx -> tx.add("stock", 1));
    }

    private Instant cutoff() {
        return clock.instant().minus(RETENTION);
    }

    @Test
    void purgeDeletesOnlyRowsOlderThanTheRetentionInBatchesOfTheBatchSize() {
        int old = 2 * BATCH + 500;
        database.insertRows("warehouse", "old-", old, T0);
        database.insertRows("other", "old-", 10, T0);
        clock.advance(RETENTION.plusDays(1));
        database.insertRows("warehouse", "at-cutoff-", 1, cutoff());
        database.insertRows("warehouse", "after-cutoff-", 1, cutoff().plusMillis(1));
        TestInbox inbox = inbox(clock);
        receive(inbox, "fresh", null);

        PurgeReport report = inbox.retention().purge();

        assertEquals(old, report.rowsPurged());
        assertEquals(3, report.batches());
        assertEquals(3, database.rows("warehouse"), "the row at the cutoff, the one after it, and the fresh one");
        assertEquals(10, database.rows("other"), "another inbox's rows are not touched");
        List<PurgeCall> calls = database.purgeCalls();
        assertEquals(3, calls.size());
        assertTrue(calls.stream().allMatch(call -> call.limit() == BATCH && call.cutoff().equals(cutoff())
                && call.inbox().equals("warehouse")), calls.toString());
        List<String> idsInPurgeOrder = IntStream.range(0, old).mapToObj(i -> "old-" + i).sorted().toList();
        assertNull(calls.get(0).after(), "the first batch starts at the beginning");
        assertEquals(new PurgePosition(T0, idsInPurgeOrder.get(BATCH - 1)), calls.get(1).after(),
                "each batch starts where the previous one ended");
        assertEquals(new PurgePosition(T0, idsInPurgeOrder.get(2 * BATCH - 1)), calls.get(2).after());
        assertEquals(old, inbox.retention().status().rowsPurged());
    }

    @Test
    void theHorizonIsCommittedBeforeTheFirstRowIsDeleted() {
        database.insertRows("warehouse", "old-", BATCH + 1, T0);
        clock.advance(RETENTION.plusDays(1));
        TestInbox inbox = inbox(clock);

        inbox.retention().purge();

        List<PurgeCall> calls = database.purgeCalls();
        assertEquals(2, calls.size());
        assertTrue(calls.stream().allMatch(call -> call.committedHorizon().equals(Optional.of(cutoff()))),
                "a claim that meets a purge's delete must find the horizon raised by a transaction already"
                        + " committed: " + calls);
    }

    @Test
    void purgeStopsAtTheFirstBatchThatIsNotFull() {
        database.insertRows("warehouse", "old-", BATCH, T0);
        clock.advance(RETENTION.plusDays(1));
        TestInbox inbox = inbox(clock);

        PurgeReport report = inbox.retention().purge();

        assertEquals(BATCH, report.rowsPurged());
        assertEquals(2, report.batches(), "a full batch may not have been the last");
        assertEquals(0, database.rows("warehouse"));
    }

    @Test
    void purgeOfAnEmptyInboxRaisesTheHorizonToTheCutoffInOneBatch() {
        TestInbox inbox = inbox(clock);

        PurgeReport report = inbox.retention().purge();

        assertEquals(new PurgeReport(0, 1, T0.minus(RETENTION)), report);
        assertEquals(Optional.of(T0.minus(RETENTION)), database.horizon("warehouse"));
    }

    @Test
    void batchThatFailsLeavesEarlierBatchesDoneAndTheHorizonRaisedAndTheNextPurgeContinues() {
        int old = 2 * BATCH + 500;
        database.insertRows("warehouse", "old-", old, T0);
        clock.advance(RETENTION.plusDays(1));
        TestInbox inbox = inbox(clock);
        database.failCommitAfter(2); // the horizon's raise and the first batch commit, the second batch fails

        assertThrows(InboxStorageException.class, () -> inbox.retention().purge());

        assertEquals(Optional.of(cutoff()), database.horizon("warehouse"), "raised before the first batch");
        assertEquals(old - BATCH, database.rows("warehouse"), "the second batch was rolled back whole");
        assertEquals(BATCH, inbox.retention().status().rowsPurged());
        assertThrows(StaleMessageException.class, () -> receive(inbox, "old-0", T0),
                "the raised horizon already guards the purged ids");

        PurgeReport next = inbox.retention().purge();

        assertEquals(old - BATCH, next.rowsPurged());
        assertEquals(0, database.rows("warehouse"));
        assertEquals(old, inbox.retention().status().rowsPurged());
    }

    @Test
    void horizonNeverMovesBackwardsEvenForAPurgerWithAnEarlierClock() {
        TestInbox late = inbox(new MutableClock(T0.plus(Duration.ofDays(60))));
        TestInbox early = inbox(new MutableClock(T0.plus(Duration.ofDays(40))));
        Instant lateHorizon = late.retention().purge().horizon();
        assertEquals(T0.plus(Duration.ofDays(30)), lateHorizon);

        PurgeReport earlyReport = early.retention().purge();

        assertEquals(lateHorizon, earlyReport.horizon(), "the report gives the stored horizon, not its own cutoff");
        assertEquals(Optional.of(lateHorizon), early.retention().status().horizon());
        assertThrows(StaleMessageException.class, () -> receive(early, "new", T0.plus(Duration.ofDays(25))),
                "the early inbox judges by the later horizon");
    }

    @Test
    void horizonStaysWhenTheClockIsSetBack() {
        TestInbox inbox = inbox(clock);
        clock.advance(Duration.ofDays(10));
        Instant horizon = inbox.retention().purge().horizon();
        clock.set(T0);

        assertEquals(horizon, inbox.retention().purge().horizon());
        assertEquals(Optional.of(horizon), database.horizon("warehouse"));
    }

    @Test
    void statusReportsTheHorizonTheOldestRowAgeTheRowsPurgedAndTheStaleRefusals() {
        TestInbox inbox = inbox(clock);
        assertEquals(new RetentionStatus(Optional.empty(), Optional.empty(), 0, 0), inbox.retention().status());
        receive(inbox, "a", null);
        clock.advance(Duration.ofDays(10));
        receive(inbox, "b", null);
        clock.advance(Duration.ofDays(25)); // T0 + 35 days: "a" is past the retention, "b" is not
        inbox.retention().purge();

        assertEquals(new RetentionStatus(Optional.of(T0.plus(Duration.ofDays(5))), Optional.of(Duration.ofDays(25)),
                1, 0), inbox.retention().status());

        assertThrows(StaleMessageException.class, () -> receive(inbox, "c", T0));
        clock.advance(Duration.ofDays(10));
        inbox.retention().purge();

        assertEquals(new RetentionStatus(Optional.of(T0.plus(Duration.ofDays(15))), Optional.empty(), 2, 1),
                inbox.retention().status(), "rows purged add up across purges; no row is left");
    }

    @Test
    void cutoffIsTakenToTheMillisecondSoARowReceivedAfterItSurvives() {
        TestInbox inbox = inbox(clock);
        clock.set(T0.plusNanos(700_000));
        receive(inbox, "early", null); // stored as received at T0
        clock.set(T0.plusNanos(1_700_000));
        receive(inbox, "late", null); // stored as received at T0 + 1 ms
        clock.set(T0.plusNanos(1_500_000).plus(RETENTION)); // the cutoff falls at T0 + 1.5 ms

        PurgeReport report = inbox.retention().purge();

        assertEquals(1, report.rowsPurged(), "only the row received before the cutoff");
        assertTrue(inbox.find("early").isEmpty());
        assertTrue(inbox.find("late").isPresent(), "received at T0 + 1.7 ms, after the cutoff");
        assertEquals(T0.plusMillis(1), report.horizon(), "the cutoff truncated to the millisecond");
        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, "late", null), "its resend is a duplicate");
    }

    @Test
    void scheduledPurgeRunsWithoutBeingCalledAndTriesAgainAfterAFailure() {
        TestInbox inbox = inbox(clock);
        receive(inbox, "a", null);
        clock.advance(RETENTION.plusDays(1));
        database.failCommitAfter(1); // the horizon's raise commits, the first batch fails
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            ScheduledFuture<?> schedule = inbox.retention().schedulePurge(scheduler, Duration.ofMillis(1));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (inbox.retention().status().rowsPurged() == 0) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the scheduled purge never purged; calls: " + database.purgeCalls());
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            schedule.cancel(false);
        } finally {
            scheduler.shutdownNow();
        }

        assertTrue(database.purgeCalls().size() >= 2, "the first purge failed and a later one ran");
        assertEquals(0, database.rows("warehouse"));
    }

    @Test
    void scheduleRefusesAPeriodThatIsNotPositive() {
        TestInbox inbox = inbox(clock);
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            assertThrows(IllegalArgumentException.class,
                    () -> inbox.retention().schedulePurge(scheduler, Duration.ZERO));
            assertThrows(IllegalArgumentException.class,
                    () -> inbox.retention().schedulePurge(scheduler, Duration.ofMillis(-1)));
            assertThrows(NullPointerException.class,
                    () -> inbox.retention().schedulePurge(null, Duration.ofMillis(1)));
        } finally {
            scheduler.shutdownNow();
        }
    }
}
