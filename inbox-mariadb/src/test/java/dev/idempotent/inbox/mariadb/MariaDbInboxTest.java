package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.Stock;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jdbi.v3.core.ConnectionFactory;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleListener;
import org.jdbi.v3.core.Handles;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What only MariaDB shows: how ids compare, two connections racing for one id, InnoDB's lock
 * waits and deadlocks, the session settings a pooled connection must keep, lost connections and
 * lost COMMIT answers, schema management. All against the real server.
 */
class MariaDbInboxTest {

    private static final Duration LONG_WAIT = Duration.ofSeconds(60);

    private MariaDbFixture fixture;
    private Stock stock;
    private final AtomicInteger effects = new AtomicInteger();
    private final List<MariaDbInbox> opened = new ArrayList<>();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void openDatabase() {
        fixture = MariaDbFixture.defaultNames();
        stock = Stock.create(fixture.jdbi(), "warehouse");
    }

    @AfterEach
    void dropDatabase() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(60, TimeUnit.SECONDS);
        opened.forEach(MariaDbInbox::close);
        fixture.close();
    }

    private MariaDbInbox open(InboxBuilder<MariaDbInbox> builder) {
        MariaDbInbox inbox = builder.build();
        opened.add(inbox);
        return inbox;
    }

    private MariaDbInbox open() {
        return open(fixture.builder().name("warehouse").busyTimeout(LONG_WAIT));
    }

    private Outcome<Integer> receive(MariaDbInbox inbox, String id, long qty) {
        return inbox.apply(id, Content.of(qty), tx -> {
            effects.incrementAndGet();
            return stock.add(tx, qty);
        });
    }

    private long rows() {
        return Stock.inboxRows(fixture.jdbi(), "warehouse");
    }

    private static long connectionId(Handle handle) {
        return handle.createQuery("SELECT CONNECTION_ID()").mapTo(Long.class).one();
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        if (!latch.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("latch not released");
        }
    }

    /** Returns once some transaction waits for a lock that connection {@code holder}'s transaction holds. */
    private void awaitSomeoneWaitingFor(long holder) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (Handle observer = fixture.admin().open()) {
            while (observer.createQuery("""
                            SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS w
                            JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
                            WHERE b.trx_mysql_thread_id = :holder""")
                    .bind("holder", holder)
                    .mapTo(Integer.class)
                    .one() == 0) {
                if (System.nanoTime() > deadline) {
                    fail("no transaction started waiting for connection " + holder + "; transactions: "
                            + observer.createQuery("SELECT CONCAT(trx_mysql_thread_id, ' ', trx_state, ' ',"
                                    + " COALESCE(trx_query, '')) FROM information_schema.INNODB_TRX")
                                    .mapTo(String.class).list());
                }
                // Polling the server's lock table: there is no event to wait on. InnoDB refreshes
                // these tables only when they were not read for 100 ms, so faster polling would keep
                // reading the first answer.
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(150));
            }
        }
    }

    @Test
    void idsThatDifferOnlyInCaseAreTwoMessages() {
        MariaDbInbox inbox = open();

        assertInstanceOf(Outcome.Applied.class, receive(inbox, "A-1", 1));
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "a-1", 2), "a case-insensitive key would say Conflict");

        assertEquals(2, rows());
        assertEquals(3, stock.total());
        assertEquals(Content.of(1).fingerprint(), inbox.find("A-1").orElseThrow().fingerprint());
        assertEquals(Content.of(2).fingerprint(), inbox.find("a-1").orElseThrow().fingerprint());
    }

    @Test
    void idsThatDifferOnlyInTrailingSpacesAreTwoMessages() {
        MariaDbInbox inbox = open();

        assertInstanceOf(Outcome.Applied.class, receive(inbox, "x", 1));
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "x ", 2), "a PAD SPACE collation makes 'x ' equal 'x'");
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "x  ", 4));

        assertEquals(3, rows());
        assertEquals(7, stock.total());
        assertEquals("x ", inbox.find("x ").orElseThrow().id(), "read back with its space");
        assertEquals(Content.of(1).fingerprint(), inbox.find("x").orElseThrow().fingerprint());
    }

    @Test
    void idsInTwoUnicodeNormalFormsAreTwoMessages() {
        MariaDbInbox inbox = open();
        String precomposed = "caf\u00e9";
        String decomposed = "cafe\u0301";

        assertInstanceOf(Outcome.Applied.class, receive(inbox, precomposed, 1));
        assertInstanceOf(Outcome.Applied.class, receive(inbox, decomposed, 2), "ids are not normalised");
        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, precomposed, 1));

        assertEquals(2, rows());
        assertEquals(3, stock.total());
        assertEquals(decomposed, inbox.find(decomposed).orElseThrow().id());
    }

    /** Starts an apply of snack-7 whose effect holds its uncommitted claim until {@code release}. */
    private Future<Outcome<Integer>> firstCopyHoldingItsClaim(
            MariaDbInbox inbox, AtomicLong connection, CountDownLatch claimed, CountDownLatch release, boolean fail) {
        return pool.submit(() -> inbox.apply("snack-7", Content.of(7), tx -> {
            connection.set(connectionId(tx));
            claimed.countDown();
            await(release);
            if (fail) {
                throw new IllegalStateException("first copy gives up");
            }
            effects.incrementAndGet();
            return stock.add(tx, 7);
        }));
    }

    @Test
    void claimBlockedByAnUncommittedClaimWaitsAndIsDuplicateWhenItCommits() throws Exception {
        MariaDbInbox first = open();
        MariaDbInbox second = open(); // another instance, as another receiver process would have
        AtomicLong firstConnection = new AtomicLong();
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome<Integer>> firstOutcome = firstCopyHoldingItsClaim(first, firstConnection, claimed, release, false);
        await(claimed);

        Future<Outcome<Integer>> secondOutcome = pool.submit(() -> receive(second, "snack-7", 7));
        awaitSomeoneWaitingFor(firstConnection.get());
        assertFalse(secondOutcome.isDone(), "the second copy waits on the first one's claim");
        release.countDown();

        assertInstanceOf(Outcome.Applied.class, firstOutcome.get(30, TimeUnit.SECONDS));
        assertInstanceOf(Outcome.Duplicate.class, secondOutcome.get(30, TimeUnit.SECONDS));
        assertEquals(1, effects.get());
        assertEquals(7, stock.total());
        assertEquals(1, rows());
    }

    @Test
    void claimBlockedByAnUncommittedClaimWaitsAndAppliesWhenItRollsBack() throws Exception {
        MariaDbInbox first = open();
        MariaDbInbox second = open();
        AtomicLong firstConnection = new AtomicLong();
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome<Integer>> firstOutcome = firstCopyHoldingItsClaim(first, firstConnection, claimed, release, true);
        await(claimed);

        Future<Outcome<Integer>> secondOutcome = pool.submit(() -> receive(second, "snack-7", 7));
        awaitSomeoneWaitingFor(firstConnection.get());
        assertFalse(secondOutcome.isDone(), "the second copy waits on the first one's claim");
        release.countDown();

        Exception firstFailure = assertThrows(Exception.class, () -> firstOutcome.get(30, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, firstFailure.getCause());
        assertInstanceOf(Outcome.Applied.class, secondOutcome.get(30, TimeUnit.SECONDS));
        assertEquals(1, effects.get());
        assertEquals(7, stock.total());
        assertEquals(1, rows());
    }

    /**
     * A Jdbi whose every handle is the one connection given, so that what the inbox leaves on a
     * session can be read on it afterwards, as a pool's next borrower would find it.
     */
    private static Jdbi onOneConnection(Connection connection) {
        return Jdbi.create(new ConnectionFactory() {
            @Override
            public Connection openConnection() {
                return connection;
            }

            @Override
            public void closeConnection(Connection toClose) {
                // Kept open for the next handle, as a pool keeps it.
            }
        });
    }

    /** A connection to the fixture's database whose session starts with {@code settings}, if not empty. */
    private Connection connect(String settings) throws SQLException {
        Connection connection = DriverManager.getConnection("jdbc:mariadb://" + MariaDbFixture.HOST + ":"
                + MariaDbFixture.PORT + "/" + fixture.database() + "?useAffectedRows=true",
                MariaDbFixture.USER, MariaDbFixture.PASSWORD);
        if (!settings.isEmpty()) {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET SESSION " + settings);
            }
        }
        return connection;
    }

    private static String sessionSettings(Handle handle) {
        return handle.createQuery("SELECT CONCAT(@@SESSION.tx_isolation, ' ', @@SESSION.innodb_lock_wait_timeout, ' ',"
                + " COALESCE(@inbox_lock_wait_timeout, 'unset'))").mapTo(String.class).one();
    }

    /**
     * Whether the handle's open transaction reads what another connection commits while it runs (READ
     * COMMITTED does; REPEATABLE READ keeps its first snapshot, and SERIALIZABLE's locking reads keep
     * the other connection from inserting at all), and the lock wait timeout in force. Read by
     * behaviour: InnoDB's own tables of transactions are refreshed at most every 100 ms.
     */
    private String transactionSettings(Handle tx) {
        long before = tx.createQuery("SELECT COUNT(*) FROM probe").mapTo(Long.class).one();
        String other;
        try (Handle outside = fixture.jdbi().open()) {
            outside.execute("SET SESSION innodb_lock_wait_timeout = 1");
            outside.execute("INSERT INTO probe () VALUES ()");
            other = "committed";
        } catch (JdbiException e) {
            other = "blocked";
        }
        long after = tx.createQuery("SELECT COUNT(*) FROM probe").mapTo(Long.class).one();
        String isolation = after > before ? "sees other commits" : "does not see a row another connection " + other;
        return isolation + " " + tx.createQuery("SELECT @@SESSION.innodb_lock_wait_timeout").mapTo(String.class).one();
    }

    @Test
    void everyTransactionIsReadCommittedWithTheBusyTimeoutAndTheSessionKeepsItsOwnSettings() throws Exception {
        fixture.jdbi().useHandle(handle -> handle.execute("CREATE TABLE probe (n INT AUTO_INCREMENT PRIMARY KEY)"));
        try (Connection connection = connect("tx_isolation = 'SERIALIZABLE', innodb_lock_wait_timeout = 7")) {
            Jdbi one = onOneConnection(connection);
            String before = one.withHandle(MariaDbInboxTest::sessionSettings);
            MariaDbInbox inbox = open(MariaDbInbox.builder(one).name("warehouse").busyTimeout(Duration.ofMillis(1500)));
            List<String> seen = new ArrayList<>();

            inbox.apply("snack-7", Content.of(7), tx -> seen.add(transactionSettings(tx)));
            inbox.applyAll(List.of(Message.of("snack-8", Content.of(8))),
                    (tx, message) -> seen.add(transactionSettings(tx)));

            assertEquals("SERIALIZABLE 7 unset", before);
            assertEquals(List.of("sees other commits 2", "sees other commits 2"), seen,
                    "1.5 s of busy timeout wait at least 2 whole seconds");
            assertEquals(before, one.withHandle(MariaDbInboxTest::sessionSettings), "the session is as it was");
        }
    }

    @Test
    void lockWaitPastTheBusyTimeoutIsBusyAndTheSessionKeepsItsOwnTimeout() throws Exception {
        try (Connection connection = connect("innodb_lock_wait_timeout = 7")) {
            Jdbi one = onOneConnection(connection);
            MariaDbInbox inbox = open(MariaDbInbox.builder(one).name("warehouse").busyTimeout(Duration.ofMillis(200)));

            try (InboxFixture.HeldLock held = fixture.holdWriteLock("warehouse", "snack-7")) {
                InboxBusyException busy = assertThrows(InboxBusyException.class, () -> receive(inbox, "snack-7", 7));
                assertEquals(MariaDbErrors.LOCK_WAIT_TIMEOUT, MariaDbErrors.errorCode(busy));
                assertTrue(busy.getMessage().contains("nothing was applied"), busy.getMessage());
                assertEquals("REPEATABLE-READ 7 unset", one.withHandle(MariaDbInboxTest::sessionSettings),
                        "after the failure too, the session is as it was");
            }

            assertEquals(0, effects.get());
            assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7), "applies once the lock is gone");
            assertEquals("REPEATABLE-READ 7 unset", one.withHandle(MariaDbInboxTest::sessionSettings));
        }
    }

    @Test
    void lockWaitInsideTheEffectIsBoundedByTheBusyTimeoutAndReachesTheCallerAsTheEffectsOwnFailure() {
        MariaDbInbox inbox = open(fixture.builder().name("warehouse").busyTimeout(Duration.ofMillis(200)));

        try (Handle other = fixture.jdbi().open()) {
            other.begin();
            other.execute("UPDATE stock SET total = total + 0 WHERE name = 'warehouse'");
            JdbiException thrown = assertThrows(JdbiException.class, () -> receive(inbox, "snack-7", 7));
            assertEquals(MariaDbErrors.LOCK_WAIT_TIMEOUT, MariaDbErrors.errorCode(thrown));
            other.rollback();
        }

        assertEquals(0, rows());
        assertEquals(0, stock.total());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7));
        assertEquals(7, stock.total());
    }

    /**
     * Sixteen threads claim neighbouring ids for 30 seconds ({@code -Dinbox.test.neighbours.seconds}
     * changes it), in rounds of 1,000 ids: each id is delivered by two threads, and each thread's
     * ids sit between the others', so every claim has neighbours being claimed at the same moment.
     * No deadlock or gap lock surfaces as anything but a retryable busy error, and with retries
     * every id ends applied exactly once.
     */
    @Test
    void neighbouringIdsClaimedFromSixteenThreadsAreEachAppliedOnceWithNoErrorButBusy() throws Exception {
        int threads = 16;
        int idsPerRound = 1000;
        long runNanos = TimeUnit.SECONDS.toNanos(Long.getLong("inbox.test.neighbours.seconds", 30));
        fixture.jdbi().useHandle(handle -> handle.execute("CREATE TABLE shelf (item VARCHAR(32) PRIMARY KEY)"));
        MariaDbInbox inbox = open(fixture.builder().name("warehouse"));
        Map<String, List<String>> outcomes = new ConcurrentHashMap<>();
        AtomicInteger busy = new AtomicInteger();
        AtomicInteger rounds = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<?>> workers = new ArrayList<>();
        long deadline = System.nanoTime() + runNanos;
        for (int t = 0; t < threads; t++) {
            int thread = t;
            workers.add(pool.submit(() -> {
                start.await();
                for (int round = 0; System.nanoTime() < deadline; round++) {
                    rounds.accumulateAndGet(round + 1, Math::max);
                    for (int i = 0; i < idsPerRound; i++) {
                        if (i % threads != thread && (i + 1) % threads != thread) {
                            continue;
                        }
                        String id = String.format("n-%04d-%05d", round, i);
                        while (true) {
                            try {
                                int qty = i;
                                Outcome<Integer> outcome = inbox.apply(id, Content.of(qty), tx -> {
                                    tx.execute("INSERT INTO shelf (item) VALUES (?)", id);
                                    return 1;
                                });
                                outcomes.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>())
                                        .add(outcome.getClass().getSimpleName());
                                break;
                            } catch (InboxBusyException e) {
                                busy.incrementAndGet(); // nothing was applied: retry, as a broker would redeliver
                            }
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> worker : workers) {
            worker.get(runNanos + TimeUnit.SECONDS.toNanos(120), TimeUnit.NANOSECONDS); // any error but busy fails here
        }

        System.out.printf("16 threads, %d rounds, %d ids: %d busy retries%n", rounds.get(), outcomes.size(), busy.get());
        assertTrue(outcomes.size() >= idsPerRound, "at least one round ran");
        outcomes.forEach((id, seen) -> {
            assertEquals(1, seen.stream().filter("Applied"::equals).count(), id + ": " + seen);
            assertTrue(seen.stream().allMatch(o -> o.equals("Applied") || o.equals("Duplicate")), id + ": " + seen);
        });
        assertEquals(outcomes.size(), rows());
        assertEquals(outcomes.size(), (long) fixture.jdbi().withHandle(handle ->
                handle.createQuery("SELECT COUNT(*) FROM shelf").mapTo(Long.class).one()));
    }

    /**
     * Makes the effect's transaction the victim of a deadlock on business rows while the effect
     * runs: another connection, whose transaction has changed more rows (InnoDB rolls back the one
     * that changed fewer), takes row {@code right}, then waits for row {@code left}, which the
     * effect holds, while the effect waits for {@code right}. The effect catches the deadlock error,
     * counts it and goes on, as a careless effect would.
     */
    private final class DeadlockOnShelf {
        final AtomicInteger deadlocks = new AtomicInteger();
        private final CountDownLatch effectHoldsLeft = new CountDownLatch(1);
        private final CountDownLatch otherHoldsRight = new CountDownLatch(1);
        private final Future<?> other;

        DeadlockOnShelf() {
            fixture.jdbi().useHandle(handle -> {
                handle.execute("CREATE TABLE shelf (item VARCHAR(32) PRIMARY KEY, qty BIGINT NOT NULL)");
                handle.execute("INSERT INTO shelf (item, qty) VALUES ('left', 0), ('right', 0)");
                handle.execute("CREATE TABLE ballast (n INT PRIMARY KEY)");
            });
            other = pool.submit(() -> {
                try (Handle handle = fixture.jdbi().open()) {
                    handle.begin();
                    for (int n = 0; n < 50; n++) {
                        handle.execute("INSERT INTO ballast (n) VALUES (?)", n);
                    }
                    await(effectHoldsLeft);
                    handle.execute("UPDATE shelf SET qty = qty + 1 WHERE item = 'right'");
                    otherHoldsRight.countDown();
                    awaitSomeoneWaitingFor(connectionId(handle));
                    handle.execute("UPDATE shelf SET qty = qty + 1 WHERE item = 'left'");
                    handle.commit();
                }
                return null;
            });
        }

        /** The part of the effect that meets the deadlock and swallows it. */
        void meetAndSwallow(Handle tx) throws InterruptedException {
            tx.execute("UPDATE shelf SET qty = qty + 1 WHERE item = 'left'");
            effectHoldsLeft.countDown();
            await(otherHoldsRight);
            try {
                tx.execute("UPDATE shelf SET qty = qty + 1 WHERE item = 'right'");
            } catch (JdbiException e) {
                if (MariaDbErrors.errorCode(e) == MariaDbErrors.DEADLOCK) {
                    deadlocks.incrementAndGet();
                }
            }
        }

        void awaitOther() throws Exception {
            other.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void deadlockTheEffectCaughtAndWentOnFromIsRefusedAndNothingIsRecorded() throws Exception {
        MariaDbInbox inbox = open();
        DeadlockOnShelf deadlock = new DeadlockOnShelf();

        InboxException refused = assertThrows(InboxException.class, () -> inbox.apply("snack-7", Content.of(7), tx -> {
            deadlock.meetAndSwallow(tx);
            return stock.add(tx, 7);
        }));
        deadlock.awaitOther();

        assertEquals(1, deadlock.deadlocks.get(), "the effect's transaction was the deadlock's victim");
        assertInstanceOf(EffectBrokeTransactionException.class, refused);
        assertTrue(inbox.find("snack-7").isEmpty(), "nothing recorded");
        assertEquals(0, stock.total(), "what the effect wrote after the deadlock is not committed either");
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7), "a retry applies");
        assertEquals(7, stock.total());
    }

    @Test
    void deadlockAMessageOfABatchCaughtAndWentOnFromFailsTheWholeBatchAsBusy() throws Exception {
        MariaDbInbox inbox = open();
        DeadlockOnShelf deadlock = new DeadlockOnShelf();
        List<Message> batch = List.of(Message.of("snack-1", Content.of(1)), Message.of("snack-2", Content.of(2)));

        InboxBusyException refused = assertThrows(InboxBusyException.class, () -> inbox.applyAll(batch,
                (tx, message) -> {
                    if (message.id().equals("snack-2")) {
                        deadlock.meetAndSwallow(tx);
                    }
                    return stock.add(tx, message.id().equals("snack-1") ? 1 : 2);
                }));
        deadlock.awaitOther();

        assertEquals(1, deadlock.deadlocks.get(), "the batch's transaction was the deadlock's victim");
        assertTrue(refused.getMessage().contains("nothing of the call was applied"), refused.getMessage());
        assertEquals(0, rows(), "snack-1 went with the rolled-back transaction, and is not reported applied");
        assertEquals(0, stock.total());
        List<MessageResult<Integer>> retried =
                inbox.applyAll(batch, (tx, message) -> stock.add(tx, message.id().equals("snack-1") ? 1 : 2));
        assertInstanceOf(Outcome.Applied.class, retried.get(0).outcome().orElseThrow(), "a retry applies");
        assertInstanceOf(Outcome.Applied.class, retried.get(1).outcome().orElseThrow());
        assertEquals(3, stock.total());
    }

    @Test
    void foundRowsConnectionIsRefusedAtBuild() {
        open().close(); // the schema is in place
        Jdbi foundRows = fixture.jdbiVia(MariaDbFixture.PORT, ""); // the driver's default

        InboxException refused = assertThrows(InboxException.class, () -> MariaDbInbox.builder(foundRows).build());

        assertTrue(refused.getMessage().contains("useAffectedRows=true"), refused.getMessage());
        assertEquals(0, rows(), "the check leaves nothing behind");
    }

    @Test
    void readOnlySessionIsRefusedAsReadOnlyAndNothingIsApplied() {
        open().close(); // the schema is in place
        Jdbi readOnly = fixture.jdbi("");
        readOnly.getConfig(Handles.class).addListener(new HandleListener() {
            @Override
            public void handleCreated(Handle handle) {
                handle.execute("SET SESSION TRANSACTION READ ONLY");
            }
        });
        MariaDbInbox inbox = open(MariaDbInbox.builder(readOnly).name("warehouse"));

        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> receive(inbox, "snack-7", 7));

        assertEquals(InboxStorageException.Kind.READ_ONLY, refused.kind());
        assertEquals(MariaDbErrors.READ_ONLY_TRANSACTION, MariaDbErrors.errorCode(refused));
        assertEquals(0, effects.get());
        assertEquals(0, rows());
        assertTrue(inbox.find("snack-7").isEmpty(), "reading still works");
        assertEquals(1, inbox.stats().failed());
    }

    @Test
    void newerSchemaVersionIsRefused() {
        open().close();
        fixture.jdbi().useHandle(handle -> handle.execute("UPDATE inbox_schema SET version = 2, revision = 0,"
                + " min_release = '0.3.0' WHERE component = 'inbox'"));

        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> fixture.builder().build());

        assertEquals(InboxStorageException.Kind.NEWER_SCHEMA, refused.kind());
        assertTrue(refused.getMessage().contains("schema 2.0"), refused.getMessage());
        assertTrue(refused.getMessage().contains("release 0.3.0"), refused.getMessage());
    }

    @Test
    void firstUseByManyProcessesAtOnceCreatesTheSchemaOnce() throws Exception {
        int builders = 6;
        CyclicBarrier start = new CyclicBarrier(builders);
        List<Future<MariaDbInbox>> built = new ArrayList<>();
        for (int i = 0; i < builders; i++) {
            Jdbi own = fixture.jdbi(""); // a Jdbi each, as separate processes would have
            built.add(pool.submit(() -> {
                start.await();
                return MariaDbInbox.builder(own).name("warehouse").build();
            }));
        }
        for (Future<MariaDbInbox> inbox : built) {
            opened.add(inbox.get(60, TimeUnit.SECONDS));
        }

        int versions = fixture.jdbi().withHandle(handle ->
                handle.createQuery("SELECT COUNT(*) FROM inbox_schema WHERE component = 'inbox'").mapTo(Integer.class).one());
        assertEquals(1, versions);
        assertInstanceOf(Outcome.Applied.class, receive(opened.get(0), "snack-7", 7));
        assertInstanceOf(Outcome.Duplicate.class, receive(opened.get(builders - 1), "snack-7", 7));
    }

    @Test
    void unreachableServerIsUnavailable() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        Jdbi nowhere = fixture.jdbiVia(closedPort, "&useAffectedRows=true");

        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> MariaDbInbox.builder(nowhere).build());

        assertEquals(InboxStorageException.Kind.UNAVAILABLE, refused.kind());
    }

    @Test
    void connectionKilledBeforeTheCommitIsUnavailableAndRedeliveryApplies() {
        AtomicLong connection = new AtomicLong();
        InboxListener killer = new InboxListener() {
            @Override
            public void onPhase(String inbox, String id, Phase phase) {
                if (phase == Phase.EFFECT_DONE) {
                    fixture.admin().useHandle(handle -> handle.execute("KILL CONNECTION " + connection.get()));
                }
            }
        };
        MariaDbInbox inbox = open(fixture.builder().name("warehouse").listener(killer));

        InboxStorageException lost = assertThrows(InboxStorageException.class, () -> inbox.apply("snack-7",
                Content.of(7), tx -> {
                    connection.set(connectionId(tx));
                    effects.incrementAndGet();
                    return stock.add(tx, 7);
                }));

        // The release of the savepoint around the effect, sent before the COMMIT, found the
        // connection gone: the COMMIT was never sent, so the outcome is known, and nothing committed.
        assertEquals(InboxStorageException.Kind.UNAVAILABLE, lost.kind());
        assertEquals(0, stock.total());
        assertTrue(inbox.find("snack-7").isEmpty());
        assertInstanceOf(Outcome.Applied.class, receive(open(), "snack-7", 7), "redelivery tells the answer");
        assertEquals(7, stock.total());
    }

    @Test
    void answerLostAfterTheCommitIsUnknownOutcomeAndRedeliveryIsDuplicate() throws Exception {
        MariaDbInbox direct = open();
        MariaDbInbox relayed;
        try (CommitReplyCutter cutter = new CommitReplyCutter(MariaDbFixture.HOST, MariaDbFixture.PORT)) {
            relayed = open(MariaDbInbox.builder(fixture.jdbiVia(cutter.port(), "&useAffectedRows=true"))
                    .name("warehouse"));
            cutter.arm();

            assertThrows(OutcomeUnknownException.class, () -> receive(relayed, "snack-7", 7));
            assertTrue(cutter.hasCut(), "the relay dropped the answer to a COMMIT");
        }

        assertEquals(7, stock.total(), "the COMMIT reached the server and took effect");
        assertTrue(direct.find("snack-7").isPresent());
        assertInstanceOf(Outcome.Duplicate.class, receive(direct, "snack-7", 7), "redelivery tells the answer");
        assertEquals(1, effects.get());
        assertEquals(1, relayed.stats().failed(), "counted as a failure, never as applied");
    }

    @Test
    void connectionAlreadyInATransactionIsRefused() {
        open().close();
        Jdbi jdbi = fixture.jdbi("");
        AtomicBoolean beginOnOpen = new AtomicBoolean();
        jdbi.getConfig(Handles.class).addListener(new HandleListener() {
            @Override
            public void handleCreated(Handle handle) {
                if (beginOnOpen.get()) {
                    handle.begin();
                }
            }
        });
        MariaDbInbox inbox = open(MariaDbInbox.builder(jdbi).name("warehouse"));
        beginOnOpen.set(true);

        InboxException refused = assertThrows(InboxException.class, () -> receive(inbox, "snack-7", 7));

        assertTrue(refused.getMessage().contains("silently join"), refused.getMessage());
        assertEquals(0, effects.get());
        assertEquals(0, rows());
    }

    @Test
    void sessionAfterAFailedTransactionHasNoInboxVariableLeft() throws Exception {
        try (Connection connection = connect("")) {
            Jdbi one = onOneConnection(connection);
            MariaDbInbox inbox = open(MariaDbInbox.builder(one).name("warehouse"));

            assertThrows(IllegalStateException.class, () -> inbox.apply("snack-7", Content.of(7), tx -> {
                throw new IllegalStateException("the effect fails");
            }));

            assertNull(one.withHandle(handle -> handle.createQuery("SELECT @inbox_lock_wait_timeout")
                    .mapTo(String.class).one()));
            assertEquals(0, rows());
        }
    }
}
