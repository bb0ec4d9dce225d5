package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.spi.InboxPurger;
import dev.idempotent.inbox.testkit.Stock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Retention on PostgreSQL: batched purges, a horizon that only moves forward, stale refusals. */
class PostgresRetentionTest {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");
    private static final Duration RETENTION = Duration.ofDays(30);

    private PostgresFixture fixture;
    private Stock stock;
    private final List<PostgresInbox> opened = new ArrayList<>();

    @BeforeEach
    void openSchema() {
        fixture = new PostgresFixture();
        stock = Stock.create(fixture.jdbi(), "warehouse");
    }

    @AfterEach
    void dropSchema() {
        opened.forEach(PostgresInbox::close);
        fixture.close();
    }

    private PostgresInbox inbox(MutableClock clock) {
        PostgresInbox inbox = fixture.builder().name("warehouse").retention(RETENTION).clock(clock).build();
        opened.add(inbox);
        return inbox;
    }

    private Outcome<Integer> receive(PostgresInbox inbox, String id, long qty, Instant originTime) {
        return inbox.apply(id, Content.of(qty), originTime, tx -> stock.add(tx, qty));
    }

    @Test
    void resendOfAPurgedIdWithItsOriginTimeIsRefusedAsStaleAndNewMessagesStillApply() {
        MutableClock clock = new MutableClock(T0);
        PostgresInbox inbox = inbox(clock);
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7, T0));
        clock.advance(RETENTION.plusDays(1));

        PurgeReport report = inbox.retention().purge();

        assertEquals(1, report.rowsPurged());
        assertEquals(clock.instant().minus(RETENTION), report.horizon());
        StaleMessageException stale = assertThrows(StaleMessageException.class, () -> receive(inbox, "snack-7", 7, T0));
        assertEquals(report.horizon(), stale.horizon());
        assertEquals(7, stock.total(), "the stale resend was not applied again");
        assertEquals(0, Stock.inboxRows(fixture.jdbi(), "warehouse"), "nothing was written for it");
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-8", 8, clock.instant()));
        assertEquals(15, stock.total());
        assertEquals(1, inbox.stats().stale());
    }

    @Test
    void purgeDeletesInBatchesOnlyWhatIsOlderThanTheRetention() {
        MutableClock clock = new MutableClock(T0.plus(RETENTION).plus(Duration.ofDays(1)));
        int old = InboxPurger.BATCH_SIZE * 2 + 500;
        fixture.builder().build().close(); // the schema is in place
        fixture.jdbi().useHandle(handle -> {
            handle.execute("""
                    INSERT INTO inbox_message (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                               fingerprint, received_at)
                    SELECT 'warehouse', 'old-' || n, 1, 'inbox.int64', 1, ?, ? FROM generate_series(1, ?) AS n""",
                    new byte[32], OffsetDateTime.ofInstant(T0, ZoneOffset.UTC), old);
        });
        PostgresInbox inbox = inbox(clock);
        receive(inbox, "fresh", 1, clock.instant());

        PurgeReport report = inbox.retention().purge();

        assertEquals(old, report.rowsPurged());
        assertEquals(3, report.batches());
        assertEquals(1, Stock.inboxRows(fixture.jdbi(), "warehouse"), "the fresh row is kept");
        assertEquals(Optional.of(Duration.ZERO), inbox.retention().status().oldestRowAge());
    }

    @Test
    void horizonNeverMovesBackwardsEvenForAPurgerWithAnEarlierClock() {
        PostgresInbox late = inbox(new MutableClock(T0.plus(Duration.ofDays(60))));
        PostgresInbox early = inbox(new MutableClock(T0.plus(Duration.ofDays(40))));
        Instant lateHorizon = late.retention().purge().horizon();

        PurgeReport earlyReport = early.retention().purge();

        assertEquals(lateHorizon, earlyReport.horizon());
        assertEquals(Optional.of(lateHorizon), early.retention().status().horizon());
    }

    @Test
    void concurrentPurgersLeaveTheLatestHorizon() throws Exception {
        int purgers = 6;
        List<PostgresInbox> inboxes = new ArrayList<>();
        for (int i = 0; i < purgers; i++) {
            inboxes.add(inbox(new MutableClock(T0.plus(RETENTION).plus(Duration.ofDays(i)))));
        }
        CyclicBarrier start = new CyclicBarrier(purgers);
        ExecutorService pool = Executors.newFixedThreadPool(purgers);
        try {
            List<Future<PurgeReport>> reports = new ArrayList<>();
            for (PostgresInbox inbox : inboxes) {
                reports.add(pool.submit(() -> {
                    start.await();
                    return inbox.retention().purge();
                }));
            }
            for (Future<PurgeReport> report : reports) {
                assertTrue(report.get(60, TimeUnit.SECONDS).horizon().compareTo(T0) >= 0);
            }
        } finally {
            pool.shutdownNow();
        }

        assertEquals(Optional.of(T0.plus(Duration.ofDays(purgers - 1))), inboxes.get(0).retention().status().horizon());
    }
}
