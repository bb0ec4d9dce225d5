package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.Stock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
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
 * Joined calls on MariaDB beyond the shared contract: the busy timeout bounds the claim's wait and
 * the session's own lock wait timeout is back afterwards, and a database without the inbox's
 * tables is refused by name.
 */
class MariaDbJoinedTest {

    private MariaDbFixture fixture;
    private MariaDbInbox inbox;
    private Stock stock;

    @BeforeEach
    void open() {
        fixture = MariaDbFixture.defaultNames();
        inbox = MariaDbInbox.builder(fixture.jdbi()).name("joined").busyTimeout(Duration.ofSeconds(1)).build();
        stock = Stock.create(fixture.jdbi(), "joined");
    }

    @AfterEach
    void close() {
        inbox.close();
        fixture.close();
    }

    @Test
    void theBusyTimeoutBoundsTheClaimAndTheSessionsLockWaitTimeoutSurvives() {
        try (InboxFixture.HeldLock held = fixture.holdWriteLock("joined", "snack-7");
                Handle handle = fixture.jdbi().open()) {
            handle.execute("SET SESSION innodb_lock_wait_timeout = 37");
            handle.begin();
            InboxBusyException busy = assertThrows(InboxBusyException.class,
                    () -> inbox.applyIn(handle, "snack-7", Content.of(7), tx -> stock.add(tx, 7)));
            assertEquals(FailureKind.RETRYABLE, FailureKind.of(busy));
            assertEquals(37, handle.createQuery("SELECT @@SESSION.innodb_lock_wait_timeout").mapTo(Integer.class).one());
            assertInstanceOf(Outcome.Applied.class,
                    inbox.applyIn(handle, "drink-5", Content.of(5), tx -> stock.add(tx, 5)));
            assertEquals(37, handle.createQuery("SELECT @@SESSION.innodb_lock_wait_timeout").mapTo(Integer.class).one());
            handle.commit();
        }
        assertEquals(5, stock.total());
        assertEquals(1, Stock.inboxRows(fixture.jdbi(), "joined"));
    }

    @Test
    void aRedeliveryOnACallersConnectionWithTheDriversDefaultFoundRowsIsADuplicate() {
        // The application's own Jdbi, with the driver's defaults: found rows, not affected rows.
        Jdbi callers = fixture.jdbiVia(MariaDbFixture.PORT, "");
        for (int i = 0; i < 3; i++) {
            Outcome<Integer> outcome;
            try (Handle handle = callers.open()) {
                outcome = handle.inTransaction(tx -> inbox.applyIn(tx, "m-1", Content.of(5), t -> stock.add(t, 5)));
            }
            assertEquals(i == 0 ? Outcome.Applied.class : Outcome.Duplicate.class, outcome.getClass(), "delivery " + i);
        }
        assertEquals(5, stock.total());
        assertEquals(1, inbox.stats().applied());
        assertEquals(2, inbox.stats().duplicates());
    }

    @Test
    void aDatabaseWithoutTheInboxsTablesIsRefusedByName() {
        String bare = fixture.database() + "_bare";
        fixture.admin().useHandle(h -> h.execute("CREATE DATABASE " + bare));
        try {
            Jdbi elsewhere = Jdbi.create("jdbc:mariadb://" + MariaDbFixture.HOST + ":" + MariaDbFixture.PORT + "/" + bare,
                    MariaDbFixture.USER, MariaDbFixture.PASSWORD);
            try (Handle handle = elsewhere.open()) {
                handle.begin();
                InboxStorageException missing = assertThrows(InboxStorageException.class,
                        () -> inbox.applyIn(handle, "snack-7", Content.of(7), tx -> 1));
                assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, missing.kind());
                handle.rollback();
            }
        } finally {
            fixture.admin().useHandle(h -> h.execute("DROP DATABASE " + bare));
        }
        assertEquals(0, Stock.inboxRows(fixture.jdbi(), "joined"));
    }

    @Test
    void aConnectionKilledWhileTheClaimWaitsReportsTheClaimsOwnFailure() throws Exception {
        MariaDbInbox patient = MariaDbInbox.builder(fixture.jdbi()).name("joined").busyTimeout(Duration.ofSeconds(60))
                .build();
        ExecutorService killer = Executors.newSingleThreadExecutor();
        Handle handle = fixture.jdbi().open();
        try (InboxFixture.HeldLock held = fixture.holdWriteLock("joined", "snack-7")) {
            long connectionId = handle.createQuery("SELECT CONNECTION_ID()").mapTo(Long.class).one();
            handle.begin();
            Future<?> killed = killer.submit(() -> fixture.admin().useHandle(admin -> {
                waitUntilWaitingForALock(connectionId);
                admin.execute("KILL CONNECTION " + connectionId);
            }));
            InboxStorageException lost = assertThrows(InboxStorageException.class,
                    () -> patient.applyIn(handle, "snack-7", Content.of(7), tx -> stock.add(tx, 7)));
            killed.get(60, TimeUnit.SECONDS);
            assertEquals(FailureKind.RETRYABLE, FailureKind.of(lost), lost.toString());
            assertTrue(lost.getMessage().contains("claiming the id"), "the claim's failure, not the restore's: " + lost);
            assertTrue(Arrays.stream(lost.getSuppressed()).anyMatch(s -> s.getMessage().contains("restoring")),
                    "the failed restore of the lock wait timeout rides along: " + Arrays.toString(lost.getSuppressed()));
        } finally {
            killer.shutdownNow();
            patient.close();
            try {
                handle.close();
            } catch (RuntimeException gone) {
                // The connection was killed: its rollback and close cannot reach the server.
            }
        }
        assertEquals(0, patient.stats().applied());
        assertEquals(0, stock.total());
    }

    @Test
    void aDeadlockInAJoinedClaimRefusesTheTransactionsLaterCallsUntilTheCallerEndsIt() throws Exception {
        // A busy timeout far above the time the crossing claims take to meet, so that one loses a
        // deadlock rather than its lock wait.
        MariaDbInbox patient = MariaDbInbox.builder(fixture.jdbi()).name("joined").busyTimeout(Duration.ofSeconds(60))
                .build();
        ExecutorService other = Executors.newSingleThreadExecutor();
        try (patient; Handle first = fixture.jdbi().open(); Handle second = fixture.jdbi().open()) {
            long firstId = first.createQuery("SELECT CONNECTION_ID()").mapTo(Long.class).one();
            first.begin();
            second.begin();
            assertInstanceOf(Outcome.Applied.class, patient.applyIn(first, "a", Content.of(1), tx -> stock.add(tx, 1)));
            assertInstanceOf(Outcome.Applied.class, patient.applyIn(second, "b", Content.of(1), tx -> 1));
            Future<Object> firstCrossing = other.submit(() -> crossing(patient, first, "b"));
            waitUntilWaitingForALock(firstId);
            Object secondCrossing = crossing(patient, second, "a");
            Object firstResult = firstCrossing.get(60, TimeUnit.SECONDS);

            boolean secondLost = secondCrossing instanceof InboxBusyException;
            assertTrue(secondLost != firstResult instanceof InboxBusyException, "exactly one claim lost the deadlock");
            Handle loser = secondLost ? second : first;
            Handle winner = secondLost ? first : second;
            InboxBusyException lost = (InboxBusyException) (secondLost ? secondCrossing : firstResult);
            assertTrue(lost.getMessage().contains("retry the whole of it"), lost.getMessage());
            InboxBusyException refused = assertThrows(InboxBusyException.class,
                    () -> patient.applyIn(loser, "c", Content.of(1), tx -> 1), "a later call in the lost transaction");
            assertEquals(FailureKind.RETRYABLE, FailureKind.of(refused));
            loser.rollback();
            winner.commit();

            loser.begin();
            assertInstanceOf(Outcome.Applied.class, patient.applyIn(loser, "c", Content.of(1), tx -> 1),
                    "the caller's rollback ended the refusal");
            loser.commit();
        } finally {
            other.shutdownNow();
        }
        assertEquals(3, Stock.inboxRows(fixture.jdbi(), "joined"));
        assertEquals(3, patient.stats().applied(), "counted exactly what committed");
    }

    private static Object crossing(MariaDbInbox inbox, Handle handle, String id) {
        try {
            return inbox.applyIn(handle, id, Content.of(1), tx -> 1);
        } catch (InboxBusyException e) {
            return e;
        }
    }

    /** Returns once the connection {@code id} waits for a row lock; bounded by the claim's busy timeout. */
    private void waitUntilWaitingForALock(long id) {
        fixture.admin().useHandle(admin -> {
            while (admin.createQuery("SELECT COUNT(*) FROM information_schema.innodb_trx"
                    + " WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'").bind(0, id).mapTo(Integer.class)
                    .one() == 0) {
                Thread.onSpinWait();
            }
        });
    }

    /**
     * Concurrent joined claims of the same ids at each isolation level, through the driver's
     * defaults (found rows): one Applied per id, each counted once; a deadlock, which InnoDB may
     * pick a claim or an effect for, fails the caller's transaction retryably and the caller
     * retries all of it.
     */
    @ParameterizedTest
    @EnumSource(value = TransactionIsolationLevel.class, names = {"READ_COMMITTED", "REPEATABLE_READ", "SERIALIZABLE"})
    void eightThreadsClaimTheSameIdsAtEachIsolationLevel(TransactionIsolationLevel level) throws Exception {
        int threads = 8;
        List<String> ids = List.of("a", "b", "c", "d");
        Jdbi callers = fixture.jdbiVia(MariaDbFixture.PORT, "");
        CyclicBarrier start = new CyclicBarrier(threads);
        ConcurrentHashMap<String, AtomicInteger> appliedPerId = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        try (MariaDbInbox patient = MariaDbInbox.builder(fixture.jdbi()).name("joined")
                .busyTimeout(Duration.ofSeconds(30)).build()) {
            for (int t = 0; t < threads; t++) {
                long qty = 1 + t % 2;
                done.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    for (String id : ids) {
                        while (true) {
                            try {
                                Outcome<Integer> outcome = callers.inTransaction(level, handle ->
                                        patient.applyIn(handle, id, Content.of(qty), tx -> stock.add(tx, qty)));
                                if (outcome instanceof Outcome.Applied<?>) {
                                    appliedPerId.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                                }
                                break;
                            } catch (RuntimeException e) {
                                assertEquals(FailureKind.RETRYABLE, FailureKind.of(e), "only retryable failures: " + e);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : done) {
                future.get(120, TimeUnit.SECONDS);
            }
            for (String id : ids) {
                assertEquals(1, appliedPerId.get(id).get(), "one Applied for " + id);
            }
            assertEquals(ids.size(), Stock.inboxRows(fixture.jdbi(), "joined"));
            assertEquals(ids.size(), patient.stats().applied(), "counted after each commit, once per id");
        } finally {
            pool.shutdownNow();
        }
        long total = stock.total();
        assertTrue(total >= ids.size() && total <= 2L * ids.size(), "the total holds one quantity per id: " + total);
    }
}
