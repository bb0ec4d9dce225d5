package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.testkit.Stock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * PostgreSQL goes away in the middle of a run and comes back, behind a HikariCP pool: every
 * caller hears back (no call hangs), each failure is typed, the pool reconnects, and once every
 * caller has retried until accepted each id is applied exactly once.
 *
 * <p>The restart is a {@link FaultRelay} that cuts every connection and closes new ones on
 * arrival until told to come up: for the client that is a server restart, and the real server,
 * which other builds on the machine share, keeps running.
 */
class PostgresRestartTest {

    private static final int CALLERS = 4;
    private static final int IDS_PER_CALLER = 30;
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(60);

    private PostgresFixture fixture;
    private FaultRelay relay;
    private HikariDataSource pool;
    private PostgresInbox inbox;
    private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS);

    @BeforeEach
    void open() throws Exception {
        fixture = PostgresFixture.withDefaultNames();
        relay = new FaultRelay(PostgresFixture.HOST, PostgresFixture.PORT);
        HikariConfig config = new HikariConfig();
        config.setDataSource(PostgresFixture.dataSource(relay.port(), "-c search_path=" + fixture.schema()));
        config.setMaximumPoolSize(CALLERS);
        // A caller waits at most this long for a connection while the server is away.
        config.setConnectionTimeout(1_000);
        config.setPoolName("restart-test");
        pool = new HikariDataSource(config);
    }

    @AfterEach
    void close() {
        callers.shutdownNow();
        if (inbox != null) {
            inbox.close();
        }
        pool.close();
        relay.close();
        fixture.close();
    }

    @ParameterizedTest
    @EnumSource(value = CommitMode.class, names = {"PER_CALLER", "GROUP"})
    void serverRestartMidRunLeavesNoCallerHangingAndLosesNothing(CommitMode mode) throws Exception {
        Jdbi jdbi = Jdbi.create(pool);
        Stock stock = Stock.create(fixture.jdbi(), "warehouse");
        inbox = PostgresInbox.builder(jdbi).name("warehouse").commitMode(mode).busyTimeout(Duration.ofSeconds(30)).build();

        CountDownLatch appliedBeforeRestart = new CountDownLatch(20);
        AtomicBoolean restarted = new AtomicBoolean();
        CountDownLatch failedWhileDown = new CountDownLatch(CALLERS);
        AtomicInteger applied = new AtomicInteger();
        AtomicInteger duplicates = new AtomicInteger();
        AtomicInteger unknown = new AtomicInteger();
        AtomicInteger definite = new AtomicInteger();
        AtomicLong longestCallMillis = new AtomicLong();
        Map<String, Integer> failureKinds = new ConcurrentHashMap<>();
        Set<String> duplicateAfterDefiniteFailure = ConcurrentHashMap.newKeySet();

        List<Future<?>> running = new ArrayList<>();
        for (int c = 0; c < CALLERS; c++) {
            int caller = c;
            running.add(callers.submit(() -> {
                for (int k = 0; k < IDS_PER_CALLER; k++) {
                    String id = "caller" + caller + "-" + k;
                    long qty = 1 + caller * IDS_PER_CALLER + k;
                    boolean unknownBefore = false;
                    boolean definiteBefore = false;
                    while (true) {
                        long start = System.nanoTime();
                        try {
                            Outcome<Integer> outcome = inbox.apply(id, Content.of(qty), tx -> stock.add(tx, qty));
                            if (outcome instanceof Outcome.Duplicate<?>) {
                                duplicates.incrementAndGet();
                                // Only this caller sends this id: a Duplicate means an earlier try committed,
                                // which only an unknown outcome may hide.
                                if (definiteBefore && !unknownBefore) {
                                    duplicateAfterDefiniteFailure.add(id);
                                }
                            } else {
                                assertTrue(outcome instanceof Outcome.Applied<?>, id + ": " + outcome);
                                applied.incrementAndGet();
                                appliedBeforeRestart.countDown();
                            }
                            break;
                        } catch (OutcomeUnknownException e) {
                            unknownBefore = true;
                            unknown.incrementAndGet();
                            failureKinds.merge("OutcomeUnknownException", 1, Integer::sum);
                        } catch (InboxException | JdbiException e) {
                            // InboxStorageException (UNAVAILABLE and others) from the inbox, or the
                            // effect's own statement failing with the connection, passed on unchanged.
                            definiteBefore = true;
                            definite.incrementAndGet();
                            failureKinds.merge(kind(e), 1, Integer::sum);
                        } finally {
                            longestCallMillis.accumulateAndGet(
                                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
                        }
                        if (restarted.get()) {
                            failedWhileDown.countDown();
                        }
                    }
                }
                return null;
            }));
        }

        assertTrue(appliedBeforeRestart.await(CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS), "callers applied before the restart");
        restarted.set(true);
        relay.goDown();
        // Down until every caller has been turned away at least once, and the pool has tried to reconnect.
        assertTrue(failedWhileDown.await(CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS), "every caller heard of the restart");
        long deadline = System.nanoTime() + CALL_DEADLINE.toNanos();
        while (relay.refused() == 0) {
            assertTrue(System.nanoTime() < deadline, "the pool tried to reconnect");
            LockSupport.parkNanos(1_000_000);
        }
        relay.comeUp();
        for (Future<?> caller : running) {
            // A caller left hanging fails here.
            caller.get(CALL_DEADLINE.toSeconds() * 2, TimeUnit.SECONDS);
        }

        long ids = (long) CALLERS * IDS_PER_CALLER;
        long expectedTotal = ids * (ids + 1) / 2;
        assertEquals(ids, Stock.inboxRows(fixture.jdbi(), "warehouse"), "one row per id: none lost");
        assertEquals(expectedTotal, stock.total(), "each quantity counted once: none doubled");
        assertEquals(ids, applied.get() + duplicates.get(), "every id accepted once by its caller");
        assertTrue(duplicateAfterDefiniteFailure.isEmpty(),
                "a definite failure hid a commit: " + duplicateAfterDefiniteFailure);
        assertFalse(failureKinds.isEmpty(), "the restart was seen");
        assertFalse(failureKinds.keySet().stream().anyMatch(kind -> kind.contains(".OTHER")),
                "a lost connection is UNAVAILABLE, whatever step it broke: " + failureKinds);
        System.out.printf("[pg-restart] %s: callers=%d ids=%d applied=%d duplicates=%d unknown=%d definite=%d "
                        + "failures=%s connections refused while down=%d longest call=%d ms lost=0 doubled=0%n",
                mode, CALLERS, ids, applied.get(), duplicates.get(), unknown.get(), definite.get(),
                new TreeMap<>(failureKinds), relay.refused(), longestCallMillis.get());
    }

    private static String kind(Exception failure) {
        if (failure instanceof InboxStorageException storage) {
            return "InboxStorageException." + storage.kind() + "(" + PostgresErrors.sqlState(storage) + ")";
        }
        return failure.getClass().getSimpleName();
    }
}
