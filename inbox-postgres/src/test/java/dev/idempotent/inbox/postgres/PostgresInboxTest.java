package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
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
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.Stock;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleListener;
import org.jdbi.v3.core.Handles;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * What only PostgreSQL shows: two connections racing for one id, server settings that refuse
 * writes, lost connections and lost COMMIT answers, schema management. All against the real server.
 */
class PostgresInboxTest {

    private static final Duration LONG_WAIT = Duration.ofSeconds(60);

    private PostgresFixture fixture;
    private Stock stock;
    private final AtomicInteger effects = new AtomicInteger();
    private final List<PostgresInbox> opened = new ArrayList<>();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void openSchema() {
        fixture = PostgresFixture.withDefaultNames();
        stock = Stock.create(fixture.jdbi(), "warehouse");
    }

    @AfterEach
    void dropSchema() {
        pool.shutdownNow();
        opened.forEach(PostgresInbox::close);
        fixture.close();
    }

    private PostgresInbox open(InboxBuilder<PostgresInbox> builder) {
        PostgresInbox inbox = builder.build();
        opened.add(inbox);
        return inbox;
    }

    private PostgresInbox open() {
        return open(fixture.builder().name("warehouse").busyTimeout(LONG_WAIT));
    }

    private Outcome<Integer> receive(PostgresInbox inbox, String id, long qty) {
        return inbox.apply(id, Content.of(qty), tx -> {
            effects.incrementAndGet();
            return stock.add(tx, qty);
        });
    }

    private long rows() {
        return Stock.inboxRows(fixture.jdbi(), "warehouse");
    }

    private static int backendPid(Handle tx) {
        return tx.createQuery("SELECT pg_backend_pid()").mapTo(Integer.class).one();
    }

    @Test
    void effectThatSwallowsAFailedStatementOnRawJdbcIsRefusedWithoutACause() {
        PostgresInbox inbox = open();
        fixture.jdbi().useHandle(db -> db.execute("CREATE TABLE audit_entry (id TEXT PRIMARY KEY)"));
        fixture.jdbi().useHandle(db -> db.execute("INSERT INTO audit_entry VALUES ('taken')"));

        EffectBrokeTransactionException refused = assertThrows(EffectBrokeTransactionException.class,
                () -> inbox.apply("snack-7", Content.of(7), tx -> {
                    stock.add(tx, 7);
                    try (var insert = tx.getConnection().createStatement()) {
                        insert.execute("INSERT INTO audit_entry VALUES ('taken')");
                    } catch (java.sql.SQLException swallowed) {
                        // Jdbi never saw this statement, so the inbox cannot name it.
                    }
                    return 1;
                }));

        assertEquals(null, refused.getCause());
        assertTrue(inbox.find("snack-7").isEmpty());
        assertEquals(0, stock.total());
        assertEquals(0, rows());
    }

    @Test
    void effectThatRecoversInASavepointOfItsOwnIsApplied() {
        PostgresInbox inbox = open();
        fixture.jdbi().useHandle(db -> db.execute("CREATE TABLE audit_entry (id TEXT PRIMARY KEY)"));
        fixture.jdbi().useHandle(db -> db.execute("INSERT INTO audit_entry VALUES ('taken')"));

        Outcome<Integer> outcome = inbox.apply("snack-7", Content.of(7), tx -> {
            stock.add(tx, 7);
            tx.savepoint("audit");
            try {
                tx.execute("INSERT INTO audit_entry VALUES ('taken')");
            } catch (JdbiException expected) {
                tx.rollbackToSavepoint("audit");
            }
            return 1;
        });

        assertInstanceOf(Outcome.Applied.class, outcome);
        assertTrue(inbox.find("snack-7").isPresent());
        assertEquals(7, stock.total());
    }

    /** Returns once some other backend waits for a lock that backend {@code holder} holds. */
    private void awaitSomeoneWaitingFor(int holder) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (Handle observer = fixture.admin().open()) {
            while (!observer.createQuery("SELECT EXISTS (SELECT 1 FROM pg_stat_activity"
                            + " WHERE :holder = ANY (pg_blocking_pids(pid)))")
                    .bind("holder", holder)
                    .mapTo(Boolean.class)
                    .one()) {
                if (System.nanoTime() > deadline) {
                    fail("no transaction started waiting for backend " + holder);
                }
                // Polling the server's lock table: there is no event to wait on.
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            }
        }
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        if (!latch.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("latch not released");
        }
    }

    /** Starts an apply of snack-7 whose effect holds its uncommitted claim until {@code release}. */
    private Future<Outcome<Integer>> firstCopyHoldingItsClaim(
            PostgresInbox inbox, AtomicInteger pid, CountDownLatch claimed, CountDownLatch release, boolean fail) {
        return pool.submit(() -> inbox.apply("snack-7", Content.of(7), tx -> {
            pid.set(backendPid(tx));
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
    void concurrentCopyWaitsForTheFirstAndIsDuplicateWhenItCommits() throws Exception {
        PostgresInbox first = open();
        PostgresInbox second = open(); // another instance, as another receiver process would have
        AtomicInteger firstPid = new AtomicInteger();
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome<Integer>> firstOutcome = firstCopyHoldingItsClaim(first, firstPid, claimed, release, false);
        await(claimed);

        Future<Outcome<Integer>> secondOutcome = pool.submit(() -> receive(second, "snack-7", 7));
        awaitSomeoneWaitingFor(firstPid.get());
        assertFalse(secondOutcome.isDone(), "the second copy waits on the first one's claim");
        release.countDown();

        assertInstanceOf(Outcome.Applied.class, firstOutcome.get(30, TimeUnit.SECONDS));
        assertInstanceOf(Outcome.Duplicate.class, secondOutcome.get(30, TimeUnit.SECONDS));
        assertEquals(1, effects.get());
        assertEquals(7, stock.total());
        assertEquals(1, rows());
    }

    @Test
    void concurrentCopyWaitsForTheFirstAndAppliesWhenItRollsBack() throws Exception {
        PostgresInbox first = open();
        PostgresInbox second = open();
        AtomicInteger firstPid = new AtomicInteger();
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome<Integer>> firstOutcome = firstCopyHoldingItsClaim(first, firstPid, claimed, release, true);
        await(claimed);

        Future<Outcome<Integer>> secondOutcome = pool.submit(() -> receive(second, "snack-7", 7));
        awaitSomeoneWaitingFor(firstPid.get());
        assertFalse(secondOutcome.isDone(), "the second copy waits on the first one's claim");
        release.countDown();

        Exception firstFailure = assertThrows(Exception.class, () -> firstOutcome.get(30, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, firstFailure.getCause());
        assertInstanceOf(Outcome.Applied.class, secondOutcome.get(30, TimeUnit.SECONDS));
        assertEquals(1, effects.get());
        assertEquals(7, stock.total());
        assertEquals(1, rows());
    }

    @Test
    void everyTransactionIsReadCommittedWithTheBusyTimeoutWhateverTheConnectionsDefaults() {
        Jdbi serializable = fixture.jdbi("-c default_transaction_isolation=serializable -c lock_timeout=0");
        PostgresInbox inbox = open(PostgresInbox.builder(serializable).name("warehouse")
                .busyTimeout(Duration.ofMillis(1500)));
        List<String> seen = new ArrayList<>();

        inbox.apply("snack-7", Content.of(7), tx -> seen.add(settings(tx)));
        inbox.applyAll(List.of(Message.of("snack-8", Content.of(8))), (tx, message) -> seen.add(settings(tx)));
        inbox.apply("snack-9", Content.of(9), Instant.now(), tx -> seen.add(settings(tx)));
        try (Handle afterwards = serializable.open()) {
            seen.add(settings(afterwards));
        }

        assertEquals(List.of("read committed 1500ms", "read committed 1500ms", "read committed 1500ms",
                "serializable 0"), seen, "the settings hold for the inbox's transactions only");
    }

    @Test
    void aPooledConnectionHandedBackWithOtherSessionSettingsIsCorrectedForTheNextApply() {
        // The isolation level goes with every transaction's BEGIN and the lock timeout with its
        // claim, not once per connection: a pool cannot tell the inbox what another borrower did to
        // a connection's session, and behind a transaction pooler a session is not even the same
        // server connection twice.
        try (HikariDataSource pool = poolOfOne("")) {
            Jdbi pooled = Jdbi.create(pool);
            PostgresInbox inbox = open(PostgresInbox.builder(pooled).name("warehouse")
                    .busyTimeout(Duration.ofMillis(1500)));
            List<String> seen = new ArrayList<>();
            inbox.apply("snack-7", Content.of(7), tx -> seen.add(backend(tx) + " " + settings(tx)));
            try (Handle other = pooled.open()) {
                other.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE");
                other.execute("SET lock_timeout = 0");
                seen.add(backend(other) + " " + settings(other));
            }

            inbox.apply("snack-8", Content.of(8), tx -> seen.add(backend(tx) + " " + settings(tx)));

            String backend = seen.get(0).substring(0, seen.get(0).indexOf(' '));
            assertEquals(List.of(backend + " read committed 1500ms", backend + " serializable 0",
                    backend + " read committed 1500ms"), seen, "one session, handed back changed, corrected");
        }
    }

    /** One physical connection: every borrower gets the same session. */
    private HikariDataSource poolOfOne(String options) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(PostgresFixture.dataSource(PostgresFixture.PORT,
                "-c search_path=" + fixture.schema() + " " + options));
        config.setMaximumPoolSize(1);
        config.setPoolName("pool-of-one");
        return new HikariDataSource(config);
    }

    @Test
    void aClaimThatFailsHandsThePooledConnectionBackWithNoTransactionOpen() throws SQLException {
        // The inbox's BEGIN travels with its claim, on a connection still in autocommit mode; when
        // that claim fails, neither Jdbi nor the pool knows of the transaction it began, so the
        // inbox must end it itself, or the next borrower would write inside it.
        try (HikariDataSource pool = poolOfOne("")) {
            Jdbi pooled = Jdbi.create(pool);
            PostgresInbox inbox = open(PostgresInbox.builder(pooled).name("warehouse")
                    .busyTimeout(Duration.ofMillis(200)));
            try (InboxFixture.HeldLock held = fixture.holdWriteLock("warehouse", "snack-7")) {
                assertThrows(InboxBusyException.class, () -> receive(inbox, "snack-7", 7));
            }

            assertHandedBackIdle(pooled);
            assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7));
            assertHandedBackIdle(pooled);
            assertEquals(7, stock.total());
        }
    }

    @Test
    void aClaimRefusedByAReadOnlySessionHandsThePooledConnectionBackWithNoTransactionOpen() throws SQLException {
        open().close(); // the schema is in place
        try (HikariDataSource pool = poolOfOne("-c default_transaction_read_only=on")) {
            Jdbi pooled = Jdbi.create(pool);
            PostgresInbox inbox = open(PostgresInbox.builder(pooled).name("warehouse"));

            InboxStorageException refused = assertThrows(InboxStorageException.class,
                    () -> receive(inbox, "snack-7", 7));
            // And a batch, whose BEGIN travels with its first savepoint and claim: the message fails alone.
            List<MessageResult<Integer>> batch = inbox.applyAll(List.of(Message.of("snack-8", Content.of(8))),
                    (tx, message) -> stock.add(tx, 8));

            assertEquals(InboxStorageException.Kind.READ_ONLY, refused.kind());
            assertEquals(InboxStorageException.Kind.READ_ONLY,
                    assertInstanceOf(InboxStorageException.class, batch.get(0).failure().orElseThrow()).kind());
            assertHandedBackIdle(pooled);
            assertEquals(0, effects.get());
            assertEquals(0, rows());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"transaction", "always"})
    void aReadOnlyConnectionIsRefusedAsReadOnlyAndHandedBackWithNoTransactionOpen(String readOnlyMode)
            throws SQLException {
        // The inbox begins its transactions itself, as pgjdbc would have: read-only on a
        // connection set read-only. In readOnlyMode=always pgjdbc also switches the session between
        // read only and read write as autocommit changes, with a statement that fails in the
        // transaction the refused claim aborted; Jdbi cannot begin its transaction then, and the
        // inbox rolls back the one its BEGIN opened on its own.
        open().close(); // the schema is in place
        PGSimpleDataSource dataSource = PostgresFixture.dataSource(PostgresFixture.PORT,
                "-c search_path=" + fixture.schema());
        dataSource.setReadOnlyMode(readOnlyMode);
        HikariConfig config = new HikariConfig();
        config.setDataSource(dataSource);
        config.setReadOnly(true);
        config.setMaximumPoolSize(1);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            Jdbi pooled = Jdbi.create(pool);
            PostgresInbox inbox = open(PostgresInbox.builder(pooled).name("warehouse"));

            InboxStorageException refused = assertThrows(InboxStorageException.class,
                    () -> receive(inbox, "snack-7", 7));

            assertEquals(InboxStorageException.Kind.READ_ONLY, refused.kind());
            assertHandedBackIdle(pooled);
            assertEquals(0, effects.get());
            assertEquals(0, rows());
        }
    }

    /** The next borrower finds the connection in autocommit mode, with no transaction open on the server. */
    private static void assertHandedBackIdle(Jdbi pooled) throws SQLException {
        try (Handle next = pooled.open()) {
            Connection connection = next.getConnection();
            assertTrue(connection.getAutoCommit());
            assertEquals(TransactionState.IDLE, connection.unwrap(BaseConnection.class).getTransactionState());
            assertEquals(0L, next.createQuery("SELECT count(*) FROM inbox_message WHERE id = 'probe'")
                    .mapTo(Long.class).one(), "a statement runs: no aborted transaction was left");
        }
    }

    private static String backend(Handle handle) {
        return handle.createQuery("SELECT pg_backend_pid()").mapTo(String.class).one();
    }

    private static String settings(Handle handle) {
        return handle.createQuery("SELECT current_setting('transaction_isolation') || ' '"
                + " || current_setting('lock_timeout')").mapTo(String.class).one();
    }

    @Test
    @Timeout(60) // guards against a hang: PostgreSQL reads lock_timeout 0 as "wait forever"
    void zeroBusyTimeoutFailsAtOnceInsteadOfWaitingForever() {
        PostgresInbox inbox = open(fixture.builder().name("warehouse").busyTimeout(Duration.ZERO));

        try (InboxFixture.HeldLock held = fixture.holdWriteLock("warehouse", "snack-7")) {
            assertThrows(InboxBusyException.class, () -> receive(inbox, "snack-7", 7));
        }

        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7));
    }

    @Test
    void lockTimeoutInsideTheEffectReachesTheCallerAsTheEffectsOwnFailure() {
        // Unlike SQLite, where BEGIN IMMEDIATE takes the only write lock before the effect runs, an
        // effect on PostgreSQL can wait for a business row. The busy timeout bounds that wait too,
        // and the driver's error is the effect's own: it arrives as thrown, and nothing is applied.
        PostgresInbox inbox = open(fixture.builder().name("warehouse").busyTimeout(Duration.ofMillis(200)));

        try (Handle other = fixture.jdbi().open()) {
            other.begin();
            other.execute("UPDATE stock SET total = total WHERE name = 'warehouse'");
            JdbiException thrown = assertThrows(JdbiException.class, () -> receive(inbox, "snack-7", 7));
            assertEquals(PostgresErrors.LOCK_NOT_AVAILABLE, PostgresErrors.sqlState(thrown));
            other.rollback();
        }

        assertEquals(0, rows());
        assertEquals(0, stock.total());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7));
        assertEquals(7, stock.total());
    }

    @Test
    void readOnlyServerSettingIsRefusedAsReadOnlyAndNothingIsApplied() {
        open().close(); // the schema is in place
        Jdbi readOnly = fixture.jdbi("-c default_transaction_read_only=on");
        PostgresInbox inbox = open(PostgresInbox.builder(readOnly).name("warehouse"));

        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> receive(inbox, "snack-7", 7));

        assertEquals(InboxStorageException.Kind.READ_ONLY, refused.kind());
        assertEquals(0, effects.get());
        assertEquals(0, rows());
        assertTrue(inbox.find("snack-7").isEmpty(), "reading still works");
        assertEquals(1, inbox.stats().failed());
        assertEquals(1, inbox.stats().attempts());
    }

    @Test
    void readOnlySessionWithoutSchemaFailsAtBuildAsReadOnly() {
        Jdbi readOnly = fixture.jdbi("");
        readOnly.getConfig(Handles.class).addListener(new HandleListener() {
            @Override
            public void handleCreated(Handle handle) {
                handle.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY");
            }
        });

        InboxStorageException refused =
                assertThrows(InboxStorageException.class, () -> PostgresInbox.builder(readOnly).build());

        assertEquals(InboxStorageException.Kind.READ_ONLY, refused.kind());
    }

    @Test
    void newerSchemaVersionIsRefused() {
        open().close();
        fixture.jdbi().useHandle(handle -> handle.execute("UPDATE inbox_schema SET version = 2, revision = 0 WHERE component = 'inbox'"));

        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> fixture.builder().build());

        assertEquals(InboxStorageException.Kind.NEWER_SCHEMA, refused.kind());
        assertTrue(refused.getMessage().contains("schema 2.0"), refused.getMessage());
    }

    @Test
    void firstUseByManyProcessesAtOnceCreatesTheSchemaOnce() throws Exception {
        int builders = 6;
        CyclicBarrier start = new CyclicBarrier(builders);
        List<Future<PostgresInbox>> built = new ArrayList<>();
        for (int i = 0; i < builders; i++) {
            // A Jdbi each, as separate processes would have.
            Jdbi own = fixture.jdbi("");
            built.add(pool.submit(() -> {
                start.await();
                return PostgresInbox.builder(own).name("warehouse").build();
            }));
        }
        for (Future<PostgresInbox> inbox : built) {
            opened.add(inbox.get(60, TimeUnit.SECONDS));
        }

        int versions = fixture.jdbi().withHandle(handle ->
                handle.createQuery("SELECT COUNT(*) FROM inbox_schema WHERE component = 'inbox'").mapTo(Integer.class).one());
        assertEquals(1, versions);
        assertInstanceOf(Outcome.Applied.class, receive(opened.get(0), "snack-7", 7));
        assertInstanceOf(Outcome.Duplicate.class, receive(opened.get(builders - 1), "snack-7", 7));
    }

    @Test
    void shippedScriptsNeedNoDdlAfterwardsAndOnlyTheDocumentedPrivileges() throws IOException {
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            String script;
            try (InputStream in = PostgresInbox.class.getClassLoader()
                    .getResourceAsStream("dev/idempotent/inbox/postgres/flyway/" + step.file())) {
                assertNotNull(in, "the script is where the javadoc says");
                script = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
            fixture.jdbi().useHandle(handle -> handle.createScript(script).execute());
        }
        String role = fixture.schema() + "_app";
        String schema = fixture.schema();
        fixture.admin().useHandle(handle -> {
            handle.execute("CREATE ROLE " + role + " NOLOGIN");
            handle.execute("GRANT USAGE ON SCHEMA " + schema + " TO " + role);
            handle.execute("GRANT SELECT, INSERT ON " + schema + ".inbox_message TO " + role);
            handle.execute("GRANT SELECT ON " + schema + ".inbox_schema TO " + role);
            handle.execute("GRANT SELECT, UPDATE ON " + schema + ".stock TO " + role);
        });
        try {
            PostgresInbox inbox = open(PostgresInbox.builder(fixture.jdbi("-c role=" + role)).name("warehouse"));

            assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7));
            assertInstanceOf(Outcome.Duplicate.class, receive(inbox, "snack-7", 7));
            assertInstanceOf(Outcome.Conflict.class, receive(inbox, "snack-7", 8));
            assertTrue(inbox.find("snack-7").isPresent());
            assertEquals(7, stock.total());
        } finally {
            opened.forEach(PostgresInbox::close);
            fixture.admin().useHandle(handle -> {
                handle.execute("DROP OWNED BY " + role);
                handle.execute("DROP ROLE " + role);
            });
        }
    }

    @Test
    void unreachableServerIsUnavailable() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        Jdbi nowhere = fixture.jdbiVia(closedPort, "");

        InboxStorageException refused = assertThrows(InboxStorageException.class, () -> PostgresInbox.builder(nowhere).build());

        assertEquals(InboxStorageException.Kind.UNAVAILABLE, refused.kind());
    }

    @Test
    void connectionKilledBeforeTheCommitIsUnknownOutcomeAndRedeliveryApplies() {
        AtomicInteger pid = new AtomicInteger();
        InboxListener killer = new InboxListener() {
            @Override
            public void onPhase(String inbox, String id, Phase phase) {
                if (phase == Phase.EFFECT_DONE) {
                    boolean gone = fixture.admin().withHandle(handle -> handle
                            .createQuery("SELECT pg_terminate_backend(:pid, 10000)")
                            .bind("pid", pid.get())
                            .mapTo(Boolean.class)
                            .one());
                    assertTrue(gone, "the applying backend was terminated");
                }
            }
        };
        PostgresInbox inbox = open(fixture.builder().name("warehouse").listener(killer));

        assertThrows(OutcomeUnknownException.class, () -> inbox.apply("snack-7", Content.of(7), tx -> {
            pid.set(backendPid(tx));
            effects.incrementAndGet();
            return stock.add(tx, 7);
        }));

        // The server ended the session before the COMMIT arrived, so in truth nothing committed.
        // The client cannot tell this from a lost answer, and says so rather than guess.
        assertEquals(0, stock.total());
        assertTrue(inbox.find("snack-7").isEmpty());
        assertInstanceOf(Outcome.Applied.class, receive(open(), "snack-7", 7), "redelivery tells the answer");
        assertEquals(7, stock.total());
    }

    @Test
    void answerLostAfterTheCommitIsUnknownOutcomeAndRedeliveryIsDuplicate() throws Exception {
        PostgresInbox direct = open();
        PostgresInbox relayed;
        try (FaultRelay relay = new FaultRelay(PostgresFixture.HOST, PostgresFixture.PORT)) {
            relayed = open(PostgresInbox.builder(fixture.jdbiVia(relay.port(), "")).name("warehouse"));
            relay.cutCommit(FaultRelay.Cut.AFTER_THE_SERVER, 0);

            assertThrows(OutcomeUnknownException.class, () -> receive(relayed, "snack-7", 7));
            assertEquals(1, relay.commitsCut(), "the relay dropped the answer to a COMMIT");
        }

        assertEquals(7, stock.total(), "the COMMIT reached the server and took effect");
        assertTrue(direct.find("snack-7").isPresent());
        assertInstanceOf(Outcome.Duplicate.class, receive(direct, "snack-7", 7), "redelivery tells the answer");
        assertEquals(1, effects.get());
        assertEquals(1, relayed.stats().failed(), "counted as a failure, never as applied");
        assertEquals(1, relayed.stats().attempts());
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
        PostgresInbox inbox = open(PostgresInbox.builder(jdbi).name("warehouse"));
        beginOnOpen.set(true);

        InboxException refused = assertThrows(InboxException.class, () -> receive(inbox, "snack-7", 7));

        assertTrue(refused.getMessage().contains("silently join"), refused.getMessage());
        assertEquals(0, effects.get());
        assertEquals(0, rows());
    }

    @Test
    void applyFromInsideAnEffectOfTheSameInboxIsRefused() {
        PostgresInbox inbox = open();

        InboxException refused = assertThrows(InboxException.class, () -> inbox.apply(
                "snack-7", Content.of(7), tx -> receive(inbox, "snack-8", 8)));

        assertTrue(refused.getMessage().contains("inside an effect"), refused.getMessage());
        assertEquals(0, rows());
        assertEquals(0, stock.total());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7), "the thread is free again");
    }

    @Test
    void batchMessageFailingWithADatabaseErrorIsUndoneAloneAndTheRestCommit() {
        PostgresInbox inbox = open();
        fixture.jdbi().useHandle(handle -> handle.execute("CREATE TABLE shelf (item TEXT PRIMARY KEY)"));
        List<Message> batch = List.of(
                Message.of("snack-1", Content.of(1)),
                Message.of("snack-2", Content.of(2)),
                Message.of("snack-3", Content.of(3)),
                Message.of("snack-1", Content.of(1)));

        List<MessageResult<Integer>> results = inbox.applyAll(batch, (tx, message) -> {
            // snack-2 puts its item on snack-1's place: a unique violation, which aborts the
            // PostgreSQL transaction until its savepoint is rolled back.
            String item = message.id().equals("snack-2") ? "snack-1" : message.id();
            tx.execute("INSERT INTO shelf (item) VALUES (?)", item);
            return stock.add(tx, Long.parseLong(message.id().substring("snack-".length())));
        });

        assertInstanceOf(Outcome.Applied.class, results.get(0).outcome().orElseThrow());
        JdbiException failure = assertInstanceOf(JdbiException.class, results.get(1).failure().orElseThrow());
        assertEquals("23505", PostgresErrors.sqlState(failure));
        assertInstanceOf(Outcome.Applied.class, results.get(2).outcome().orElseThrow(), "the batch went on");
        assertInstanceOf(Outcome.Duplicate.class, results.get(3).outcome().orElseThrow());
        assertEquals(4, stock.total());
        assertEquals(2, rows());
        assertTrue(inbox.find("snack-2").isEmpty());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-2", 2), "the failed one can be retried");
    }
}
