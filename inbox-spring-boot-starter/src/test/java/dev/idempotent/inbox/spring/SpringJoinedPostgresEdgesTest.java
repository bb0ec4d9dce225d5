package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.postgres.PostgresInbox;
import java.time.Duration;
import java.time.Instant;
import javax.sql.DataSource;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.LazyConnectionDataSourceProxy;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * SpringInbox under a JDBC transaction manager on the real PostgreSQL, at the edges: a pool of one
 * connection, a connection killed under a call, a caller's NESTED transaction rolled back, and two
 * calls for one id at REPEATABLE READ and SERIALIZABLE.
 */
class SpringJoinedPostgresEdgesTest {

    private final PostgresSchema schema = new PostgresSchema(
            "CREATE TABLE stock (item TEXT PRIMARY KEY, total BIGINT NOT NULL)", "INSERT INTO stock VALUES ('snack', 0)");
    private HikariDataSource pool;
    private PostgresInbox inbox;

    private SpringInbox open(int connections) {
        pool = new HikariDataSource();
        pool.setJdbcUrl(schema.url());
        pool.setUsername(PostgresSchema.USER);
        pool.setMaximumPoolSize(connections);
        pool.addDataSourceProperty("ApplicationName", schema.name);
        // A call that needed a second connection fails in two seconds, rather than waiting forever.
        pool.setConnectionTimeout(2000);
        inbox = PostgresInbox.builder(Jdbi.create(pool)).schema(SchemaMode.CREATE).busyTimeout(Duration.ofSeconds(30)).build();
        return new SpringInbox(inbox, pool, transactions());
    }

    private TransactionTemplate transactions() {
        return new TransactionTemplate(new DataSourceTransactionManager(pool));
    }

    @AfterEach
    void close() {
        if (inbox != null) {
            inbox.close();
        }
        if (pool != null) {
            pool.close();
        }
        schema.close();
    }

    private int addFive() {
        return addFive(pool);
    }

    /** Through the data source the transaction manager has: a write through another is not in its transaction. */
    private static int addFive(DataSource dataSource) {
        return JdbcClient.create(dataSource).sql("UPDATE stock SET total = total + 5 WHERE item = 'snack'").update();
    }

    private long stock() {
        return JdbcClient.create(pool).sql("SELECT total FROM stock WHERE item = 'snack'").query(Long.class).single();
    }

    @Test
    void aPoolOfOneConnectionIsEnoughInsideATransactionAndOutside() {
        SpringInbox spring = open(1);

        Outcome<Integer> joined = transactions().execute(status -> spring.apply("p-1", Content.of(5), tx -> addFive()));
        Outcome<Integer> own = spring.apply("p-2", Content.of(5), tx -> addFive());
        Outcome<Integer> again = transactions().execute(status -> spring.apply("p-1", Content.of(5), tx -> addFive()));

        assertInstanceOf(Outcome.Applied.class, joined);
        assertInstanceOf(Outcome.Applied.class, own);
        assertInstanceOf(Outcome.Duplicate.class, again);
        assertEquals(10, stock());
        assertEquals(2, inbox.stats().applied());
    }

    @Test
    void aConnectionKilledUnderTheEffectCommitsNothingAndCountsNothing() {
        SpringInbox spring = open(2);

        assertThrows(RuntimeException.class, () -> transactions().executeWithoutResult(status ->
                spring.apply("k-1", Content.of(5), tx -> {
                    addFive();
                    int pid = JdbcClient.create(pool).sql("SELECT pg_backend_pid()").query(Integer.class).single();
                    schema.execute("SELECT pg_terminate_backend(" + pid + ")");
                    return 1;
                })));

        assertEquals(0, stock());
        assertTrue(inbox.find("k-1").isEmpty());
        assertEquals(0, inbox.stats().applied());
        // The pool drops the dead connection; the redelivery applies.
        assertInstanceOf(Outcome.Applied.class,
                transactions().execute(status -> spring.apply("k-1", Content.of(5), tx -> addFive())));
        assertEquals(5, stock());
    }

    @Test
    void aConnectionKilledBeforeTheEffectWritesFailsTheCallAndCommitsNothing() {
        SpringInbox spring = open(2);

        assertThrows(RuntimeException.class, () -> transactions().executeWithoutResult(status ->
                spring.apply("k-2", Content.of(5), tx -> {
                    int pid = JdbcClient.create(pool).sql("SELECT pg_backend_pid()").query(Integer.class).single();
                    schema.execute("SELECT pg_terminate_backend(" + pid + ")");
                    return addFive();
                })));

        assertEquals(0, stock());
        assertTrue(inbox.find("k-2").isEmpty());
        assertEquals(0, inbox.stats().applied());
    }

    /**
     * The caveat: the caller's own savepoint (NESTED) rolled back takes the claim and the effect's
     * writes, and the redelivery applies; but no event tells the inbox, so the outcome decided in
     * it is counted at the outer commit.
     */
    @Test
    void aNestedTransactionRolledBackTakesTheClaimButItsOutcomeIsStillCounted() {
        SpringInbox spring = open(2);
        TransactionTemplate nested = transactions();
        nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);

        transactions().executeWithoutResult(status -> nested.executeWithoutResult(inner -> {
            assertInstanceOf(Outcome.Applied.class, spring.apply("n-1", Content.of(5), tx -> addFive()));
            inner.setRollbackOnly();
        }));

        assertEquals(0, stock());
        assertTrue(inbox.find("n-1").isEmpty(), "the database is right");
        assertEquals(1, inbox.stats().applied(), "the count is not: no event reaches the inbox");
        assertInstanceOf(Outcome.Applied.class, spring.apply("n-1", Content.of(5), tx -> addFive()));
        assertEquals(5, stock());
    }

    /**
     * Two transactions at {@code isolation} claim one id at once: the second waits on the first's
     * claim; after the first commits it gets a Duplicate or a typed error, never a second effect.
     */
    @ParameterizedTest
    @ValueSource(ints = {TransactionDefinition.ISOLATION_REPEATABLE_READ, TransactionDefinition.ISOLATION_SERIALIZABLE})
    void twoTransactionsClaimingOneIdAtAStricterIsolationApplyItOnce(int isolation) throws Exception {
        SpringInbox spring = open(3);
        TransactionTemplate strict = transactions();
        strict.setIsolationLevel(isolation);
        ExecutorService second = Executors.newSingleThreadExecutor();
        try {
            Outcome<Integer> first = strict.execute(status -> {
                Outcome<Integer> outcome = spring.apply("s-1", Content.of(5), tx -> addFive());
                // The second transaction, started after this claim, waits on it until this commits.
                Future<Outcome<Integer>> waiting = second.submit(() ->
                        strict.execute(s -> spring.apply("s-1", Content.of(5), tx -> addFive())));
                awaitABackendWaitingOnALock(waiting);
                status.setRollbackOnly(); // decided below: first this one rolls back, the waiter then claims
                secondOutcome = waiting;
                return outcome;
            });
            assertInstanceOf(Outcome.Applied.class, first);
            Outcome<Integer> afterRollback = secondOutcome.get(1, TimeUnit.MINUTES);
            assertInstanceOf(Outcome.Applied.class, afterRollback, "the first rolled back: the second applies");
            assertEquals(5, stock());

            // Now the other way: the first commits while the second waits.
            Outcome<Integer> committed = strict.execute(status -> {
                Outcome<Integer> outcome = spring.apply("s-2", Content.of(5), tx -> addFive());
                secondOutcome = second.submit(() -> strict.execute(s -> spring.apply("s-2", Content.of(5), tx -> addFive())));
                awaitABackendWaitingOnALock(secondOutcome);
                return outcome;
            });
            assertInstanceOf(Outcome.Applied.class, committed);
            try {
                assertInstanceOf(Outcome.Duplicate.class, secondOutcome.get(1, TimeUnit.MINUTES));
            } catch (java.util.concurrent.ExecutionException e) {
                assertInstanceOf(InboxException.class, e.getCause(), "a typed error, if not a Duplicate");
            }
            assertEquals(10, stock(), "each id's effect once");
            assertEquals(2, inbox.stats().applied());
        } finally {
            second.shutdownNow();
        }
    }

    /** DataSourceTransactionManager binds a TransactionAwareDataSourceProxy's target; the inbox looks there. */
    @Test
    void anInboxOverATransactionAwareProxyJoinsTheTransactionOfItsTarget() {
        open(2);
        TransactionAwareDataSourceProxy proxy = new TransactionAwareDataSourceProxy(pool);
        SpringInbox spring = new SpringInbox(inbox, proxy, null);
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(proxy));

        transactions.executeWithoutResult(status -> {
            assertInstanceOf(Outcome.Applied.class, spring.apply("t-1", Content.of(5), tx -> addFive()));
            status.setRollbackOnly();
        });
        assertTrue(inbox.find("t-1").isEmpty(), "the claim rolled back with the transaction");
        assertInstanceOf(Outcome.Applied.class, transactions.execute(status -> spring.apply("t-1", Content.of(5), tx -> addFive())));
        assertInstanceOf(Outcome.Duplicate.class, transactions.execute(status -> spring.apply("t-1", Content.of(5), tx -> addFive())));
        assertEquals(5, stock());
        assertEquals(1, inbox.stats().applied());
    }

    @Test
    void anInboxAndATransactionManagerOverOneLazyConnectionProxyJoin() {
        open(2);
        LazyConnectionDataSourceProxy lazy = new LazyConnectionDataSourceProxy(pool);
        SpringInbox spring = new SpringInbox(inbox, lazy, null);
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(lazy));

        transactions.executeWithoutResult(status -> {
            assertInstanceOf(Outcome.Applied.class, spring.apply("l-1", Content.of(5), tx -> addFive(lazy)));
            status.setRollbackOnly();
        });
        assertTrue(inbox.find("l-1").isEmpty());
        assertInstanceOf(Outcome.Applied.class, transactions.execute(status -> spring.apply("l-1", Content.of(5), tx -> addFive(lazy))));
        assertEquals(5, stock());
    }

    /**
     * A transaction manager over a lazy proxy binds the proxy, not the pool: the inbox over the pool
     * is not in that transaction (nor is a JdbcTemplate over the pool), and is refused.
     */
    @Test
    void anInboxOverThePoolIsRefusedInATransactionOfALazyProxyAroundIt() {
        SpringInbox spring = open(2);
        TransactionTemplate lazyTransactions = new TransactionTemplate(
                new DataSourceTransactionManager(new LazyConnectionDataSourceProxy(pool)));

        InboxException refused = assertThrows(InboxException.class, () -> lazyTransactions.executeWithoutResult(status ->
                spring.apply("z-1", Content.of(5), tx -> 1)));

        assertTrue(refused.getMessage().contains("not one of the inbox's DataSource"), refused.getMessage());
        assertTrue(inbox.find("z-1").isEmpty());
    }

    /**
     * SUPPORTS without a transaction, after a read that bound a connection for synchronization: no
     * transaction to join, so the call opens one of its own, and its effect's writes commit in it.
     */
    @Test
    void aSupportsScopeWithoutATransactionGetsATransactionOfTheInboxsOwn() {
        SpringInbox spring = open(2);
        TransactionTemplate supports = transactions();
        supports.setPropagationBehavior(TransactionDefinition.PROPAGATION_SUPPORTS);

        Outcome<Integer> outcome = supports.execute(status -> {
            stock();
            return spring.apply("u-1", Content.of(5), tx -> addFive());
        });

        assertInstanceOf(Outcome.Applied.class, outcome);
        assertEquals(5, stock());
        assertTrue(inbox.find("u-1").isPresent());
        assertEquals(1, inbox.stats().applied());
        assertInstanceOf(Outcome.Duplicate.class, supports.execute(status -> spring.apply("u-1", Content.of(5), tx -> addFive())));
        assertEquals(5, stock());
    }

    private Future<Outcome<Integer>> secondOutcome;

    private void awaitABackendWaitingOnALock(Future<?> waiter) {
        Instant deadline = Instant.now().plusSeconds(30);
        while (lockWaiters() == 0) {
            if (waiter.isDone()) {
                throw new AssertionError("the second transaction did not wait on the first's claim: " + result(waiter));
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("no backend waited on the claim within 30 s");
            }
            Thread.onSpinWait();
        }
    }

    private long lockWaiters() {
        JdbcClient jdbc = JdbcClient.create(pool);
        // Read in the first transaction: PostgreSQL keeps one snapshot of the statistics per transaction, unless cleared.
        jdbc.sql("SELECT pg_stat_clear_snapshot()").query().listOfRows();
        return jdbc.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = ?")
                .param(schema.name).query(Long.class).single();
    }

    private static String result(Future<?> done) {
        try {
            return String.valueOf(done.get());
        } catch (Exception e) {
            java.io.StringWriter trace = new java.io.StringWriter();
            e.printStackTrace(new java.io.PrintWriter(trace));
            return trace.toString();
        }
    }
}
