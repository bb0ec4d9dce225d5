package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.MutableClock;
import dev.idempotent.inbox.testkit.Stock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Joined calls on PostgreSQL beyond the shared contract: every isolation level under concurrent
 * claims of the same ids, the busy timeout bounding the wait while the caller's own lock timeout
 * survives, and the misuses only PostgreSQL shows (an aborted caller transaction, a schema
 * without the inbox's tables, an effect that commits the inbox's own transaction).
 */
class PostgresJoinedTest {

    private PostgresFixture fixture;
    private PostgresInbox inbox;
    private Stock stock;

    @BeforeEach
    void open() {
        fixture = PostgresFixture.withDefaultNames();
        inbox = PostgresInbox.builder(fixture.jdbi()).name("joined").busyTimeout(Duration.ofSeconds(10)).build();
        stock = Stock.create(fixture.jdbi(), "joined");
    }

    @AfterEach
    void close() {
        inbox.close();
        fixture.close();
    }

    private long rows() {
        return Stock.inboxRows(fixture.jdbi(), "joined");
    }

    /**
     * Sixteen threads apply the same four ids, each in a caller transaction of the given level,
     * retrying what comes back retryable: exactly one effect commits per id, and every call ends
     * Applied (once per id), Duplicate, Conflict or a retryable error, never anything else.
     * READ UNCOMMITTED behaves as READ COMMITTED in PostgreSQL; REPEATABLE READ and SERIALIZABLE
     * meet a concurrent committed claim as a serialization failure, reported as busy.
     */
    @ParameterizedTest
    @EnumSource(value = TransactionIsolationLevel.class, names = {"READ_UNCOMMITTED", "READ_COMMITTED",
            "REPEATABLE_READ", "SERIALIZABLE"})
    void sixteenThreadsClaimTheSameIdsAtEveryIsolationLevel(TransactionIsolationLevel level) throws Exception {
        int threads = 16;
        List<String> ids = List.of("a", "b", "c", "d");
        CyclicBarrier start = new CyclicBarrier(threads);
        AtomicInteger effects = new AtomicInteger();
        AtomicInteger retryable = new AtomicInteger();
        ConcurrentHashMap<String, AtomicInteger> appliedPerId = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                long qty = 1 + t % 2;
                done.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    for (String id : ids) {
                        while (true) {
                            try {
                                Outcome<Integer> outcome = inbox.jdbi().inTransaction(level, handle ->
                                        inbox.applyIn(handle, id, Content.of(qty), tx -> {
                                            effects.incrementAndGet();
                                            return stock.add(tx, qty);
                                        }));
                                if (outcome instanceof Outcome.Applied<?>) {
                                    appliedPerId.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                                } else {
                                    assertTrue(outcome instanceof Outcome.Duplicate<?>
                                            || outcome instanceof Outcome.Conflict<?>, outcome.toString());
                                }
                                break;
                            } catch (RuntimeException e) {
                                // A serialization failure may also surface at the caller's own commit.
                                assertEquals(FailureKind.RETRYABLE, FailureKind.of(e), "only retryable failures: " + e);
                                retryable.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : done) {
                future.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        for (String id : ids) {
            assertEquals(1, appliedPerId.get(id).get(), "one Applied for " + id);
        }
        assertEquals(ids.size(), rows());
        assertEquals(ids.size(), inbox.stats().applied(), "counted after each commit, once per id");
        long total = stock.total();
        assertTrue(total >= ids.size() && total <= 2L * ids.size(), "the total holds one quantity per id: " + total);
        if (level == TransactionIsolationLevel.READ_COMMITTED || level == TransactionIsolationLevel.READ_UNCOMMITTED) {
            assertEquals(0, retryable.get(), "READ COMMITTED waits and reads the committed row: no retries");
        }
    }

    @Test
    void theBusyTimeoutBoundsTheWaitAndTheCallersLockTimeoutSurvives() throws Exception {
        try (PostgresInbox quick = PostgresInbox.builder(fixture.jdbi()).name("joined")
                .busyTimeout(Duration.ofMillis(200)).build();
                InboxFixture.HeldLock held = fixture.holdWriteLock("joined", "snack-7");
                Handle handle = fixture.jdbi().open()) {
            handle.begin();
            handle.execute("SET LOCAL lock_timeout = '7s'");
            InboxBusyException busy = assertThrows(InboxBusyException.class,
                    () -> quick.applyIn(handle, "snack-7", Content.of(7), tx -> stock.add(tx, 7)));
            assertEquals(FailureKind.RETRYABLE, FailureKind.of(busy));
            assertEquals("7s", handle.createQuery("SHOW lock_timeout").mapTo(String.class).one(),
                    "the caller's lock timeout is back, and its transaction usable");
            assertInstanceOf(Outcome.Applied.class, quick.applyIn(handle, "drink-5", Content.of(5),
                    tx -> stock.add(tx, 5)));
            assertEquals("7s", handle.createQuery("SHOW lock_timeout").mapTo(String.class).one(),
                    "after an applied call too");
            handle.commit();
        }
        assertEquals(5, stock.total());
        assertEquals(1, rows());
    }

    /**
     * Joined calls leave their savepoints to the caller's commit: fifty in one transaction, one
     * of whose effects throws in the middle, commit the other forty-nine and undo that one alone.
     */
    @Test
    void manyJoinedCallsInOneTransactionUndoOnlyTheOneThatFailed() {
        try (Handle handle = fixture.jdbi().open()) {
            handle.begin();
            for (int i = 0; i < 50; i++) {
                int n = i;
                if (n == 25) {
                    assertThrows(IllegalStateException.class, () -> inbox.applyIn(handle, "m-" + n, Content.of(1), tx -> {
                        stock.add(tx, 1);
                        throw new IllegalStateException("the 25th fails");
                    }));
                } else {
                    assertInstanceOf(Outcome.Applied.class, inbox.applyIn(handle, "m-" + n, Content.of(1),
                            tx -> stock.add(tx, 1)));
                }
            }
            assertInstanceOf(Outcome.Duplicate.class, inbox.applyIn(handle, "m-3", Content.of(1), tx -> stock.add(tx, 1)),
                    "a repeat within the transaction sees its own claim");
            handle.commit();
        }
        assertEquals(49, rows());
        assertEquals(49, stock.total());
        assertEquals(49, inbox.stats().applied());
        assertInstanceOf(Outcome.Applied.class, inbox.apply("m-25", Content.of(1), tx -> stock.add(tx, 1)));
    }

    @Test
    void anAbortedCallerTransactionIsRefusedByName() {
        try (Handle handle = fixture.jdbi().open()) {
            handle.begin();
            assertThrows(RuntimeException.class, () -> handle.execute("SELECT * FROM no_such_table"));
            InboxException refused = assertThrows(InboxException.class,
                    () -> inbox.applyIn(handle, "snack-7", Content.of(7), tx -> stock.add(tx, 7)));
            assertTrue(refused.getMessage().contains("aborted"), refused.getMessage());
            handle.rollback();
        }
        assertEquals(0, rows());
    }

    @Test
    void aConnectionToASchemaWithoutTheInboxsTablesIsRefusedByName() {
        String bare = fixture.schema() + "_bare";
        fixture.admin().useHandle(h -> h.execute("CREATE SCHEMA " + bare));
        try {
            Jdbi elsewhere = Jdbi.create(PostgresFixture.dataSource(PostgresFixture.PORT, "-c search_path=" + bare));
            try (Handle handle = elsewhere.open()) {
                handle.begin();
                handle.execute("CREATE TABLE kept (x INT)");
                InboxStorageException missing = assertThrows(InboxStorageException.class,
                        () -> inbox.applyIn(handle, "snack-7", Content.of(7), tx -> 1));
                assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, missing.kind());
                handle.execute("INSERT INTO kept VALUES (1)");
                handle.commit();
                assertEquals(1, handle.createQuery("SELECT COUNT(*) FROM kept").mapTo(Integer.class).one(),
                        "the caller's transaction stayed usable");
            }
        } finally {
            fixture.admin().useHandle(h -> h.execute("DROP SCHEMA " + bare + " CASCADE"));
        }
        assertEquals(0, rows());
    }

    @Test
    void anEffectThatCommitsTheInboxsOwnTransactionIsRefusedAndNothingIsRecorded() {
        EffectBrokeTransactionException refused = assertThrows(EffectBrokeTransactionException.class,
                () -> inbox.apply("snack-7", Content.of(7), tx -> {
                    stock.add(tx, 7);
                    tx.commit();
                    return 1;
                }));
        assertTrue(refused.getMessage().contains("tried to commit"), refused.getMessage());
        assertEquals(0, rows());
        assertEquals(0, stock.total());
        assertEquals(0, inbox.stats().applied());
        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> stock.add(tx, 7)));
    }

    @Test
    void anEffectThatCommitsTheInboxsConnectionIsReportedNotApplied() {
        assertThrows(EffectBrokeTransactionException.class, () -> inbox.apply("snack-7", Content.of(7), tx -> {
            stock.add(tx, 7);
            tx.getConnection().commit();
            return 1;
        }));
        assertEquals(0, inbox.stats().applied(), "never counted as applied");
        // The effect's commit took the claim with its write: a redelivery is a duplicate.
        assertEquals(1, rows());
        assertEquals(7, stock.total());
        assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-7", Content.of(7), tx -> stock.add(tx, 7)));
    }

    @Test
    void aCommitRefusedByADeferredConstraintCountsNothingAndTheRedeliveryApplies() {
        fixture.jdbi().useHandle(h -> {
            h.execute("CREATE TABLE joined_parent (id INT PRIMARY KEY)");
            h.execute("CREATE TABLE joined_child (id INT PRIMARY KEY, parent INT NOT NULL"
                    + " REFERENCES joined_parent (id) DEFERRABLE INITIALLY DEFERRED)");
        });
        try (Handle handle = fixture.jdbi().open()) {
            handle.begin();
            assertInstanceOf(Outcome.Applied.class, inbox.applyIn(handle, "snack-7", Content.of(7), tx -> {
                stock.add(tx, 7);
                return tx.execute("INSERT INTO joined_child (id, parent) VALUES (1, 42)");
            }));
            assertThrows(RuntimeException.class, handle::commit, "the deferred foreign key refuses the commit");
            handle.rollback();
        }
        assertEquals(0, inbox.stats().applied(), "nothing committed, nothing counted");
        assertEquals(0, Stock.inboxRows(fixture.jdbi(), "joined"));
        try (Handle handle = fixture.jdbi().open()) {
            assertInstanceOf(Outcome.Applied.class,
                    handle.inTransaction(tx -> inbox.applyIn(tx, "snack-7", Content.of(7), t -> stock.add(t, 7))));
        }
        assertEquals(7, stock.total());
        assertEquals(1, inbox.stats().applied());
    }

    @Test
    void aConnectionTerminatedWhileTheEffectRunsLeavesNothingAndCountsNothing() {
        Handle handle = fixture.jdbi().open();
        try {
            int pid = handle.createQuery("SELECT pg_backend_pid()").mapTo(Integer.class).one();
            handle.begin();
            assertThrows(RuntimeException.class, () -> inbox.applyIn(handle, "snack-7", Content.of(7), tx -> {
                stock.add(tx, 7);
                boolean terminated = fixture.admin().withHandle(admin -> admin
                        .createQuery("SELECT pg_terminate_backend(?, 30000)").bind(0, pid).mapTo(Boolean.class).one());
                assertTrue(terminated, "the backend was terminated");
                return stock.add(tx, 7);
            }));
        } finally {
            try {
                handle.close();
            } catch (RuntimeException gone) {
                // The connection was terminated: its rollback and close cannot reach the server.
            }
        }
        assertEquals(0, inbox.stats().applied());
        assertEquals(1, inbox.stats().failed());
        assertEquals(0, Stock.inboxRows(fixture.jdbi(), "joined"));
        assertEquals(0, stock.total());
    }

    @Test
    void aResendOfAPurgedIdFromASerializableSnapshotOlderThanThePurgeFailsRetryably() {
        MutableClock clock = new MutableClock(Instant.parse("2026-01-05T10:00:00Z"));
        Instant origin = clock.instant();
        try (PostgresInbox kept = PostgresInbox.builder(fixture.jdbi()).name("kept").retention(Duration.ofDays(7))
                .clock(clock).build()) {
            assertInstanceOf(Outcome.Applied.class, kept.apply("snack-7", Content.of(7), origin, tx -> stock.add(tx, 7)));
            clock.advance(Duration.ofDays(8));
            try (Handle handle = fixture.jdbi().open()) {
                handle.begin();
                handle.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
                handle.createQuery("SELECT COUNT(*) FROM inbox_message").mapTo(Long.class).one();
                assertEquals(1, kept.retention().purge().rowsPurged());
                InboxException refused = assertThrows(InboxException.class,
                        () -> kept.applyIn(handle, "snack-7", Content.of(7), origin, tx -> stock.add(tx, 7)));
                assertEquals(FailureKind.RETRYABLE, FailureKind.of(refused), refused.toString());
                handle.rollback();
            }
            assertEquals(1, kept.stats().applied(), "the first delivery only");
        }
        assertEquals(7, stock.total());
    }
}
