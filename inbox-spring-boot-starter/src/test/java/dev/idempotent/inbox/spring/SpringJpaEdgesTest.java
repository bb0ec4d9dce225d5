package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.spring.app.Movement;
import dev.idempotent.inbox.spring.app.MovementRepository;
import dev.idempotent.inbox.spring.app.ReceiptApplication;
import dev.idempotent.inbox.spring.app.ReceiptListener;
import dev.idempotent.inbox.spring.app.ReceiptService;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * SpringInbox under {@link JpaTransactionManager} with Hibernate batching writes, on the real
 * PostgreSQL, at the edges: an effect that deletes an entity or bulk-updates and then throws, a
 * checked exception let out of a {@code @Transactional} method, the same message twice in one
 * transaction, an effect's write that fails only at the commit, and a call after the commit.
 */
@SpringBootTest(classes = ReceiptApplication.class)
@DirtiesContext
class SpringJpaEdgesTest {

    private static final PostgresSchema SCHEMA = new PostgresSchema(
            "CREATE TABLE stock (item TEXT PRIMARY KEY, total BIGINT NOT NULL)",
            "INSERT INTO stock VALUES ('snack', 0)",
            "CREATE TABLE movement (receipt TEXT PRIMARY KEY, qty INTEGER NOT NULL)");

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", SCHEMA::url);
        registry.add("spring.datasource.username", () -> PostgresSchema.USER);
        registry.add("spring.datasource.hikari.auto-commit", () -> "false");
        registry.add("spring.jpa.hibernate.ddl-auto", () -> "validate");
        registry.add("spring.jpa.open-in-view", () -> "false");
        registry.add("spring.jpa.properties.hibernate.jdbc.batch_size", () -> "20");
        registry.add("spring.jpa.properties.hibernate.order_inserts", () -> "true");
        registry.add("spring.flyway.enabled", () -> "false");
        registry.add("inbox.name", () -> "jpa-edges");
        registry.add("inbox.schema", () -> "create");
    }

    @AfterAll
    static void dropSchema() {
        SCHEMA.close();
    }

    @Autowired
    SpringInbox inbox;

    @Autowired
    MovementRepository movements;

    @Autowired
    ReceiptService receipts;

    @Autowired
    JdbcClient jdbc;

    @Autowired
    PlatformTransactionManager transactionManager;

    @PersistenceContext
    EntityManager entityManager;

    TransactionTemplate transactions;

    @BeforeEach
    void transactions() {
        assertInstanceOf(JpaTransactionManager.class, transactionManager);
        transactions = new TransactionTemplate(transactionManager);
    }

    private InboxStats stats() {
        return inbox.inbox().stats();
    }

    @Test
    void anEffectThatDeletesAnEntityAndThrowsHasTheCommitRefused() {
        transactions.executeWithoutResult(status -> movements.save(new Movement("del-0", 4)));

        assertThrows(UnexpectedRollbackException.class, () -> transactions.executeWithoutResult(status -> {
            Movement kept = movements.findById("del-0").orElseThrow();
            assertThrows(IllegalStateException.class, () -> inbox.apply("del-1", Content.of(1), tx -> {
                movements.delete(kept);
                throw new IllegalStateException("effect failed");
            }));
        }));

        assertEquals(4, movements.findById("del-0").orElseThrow().qty());
        assertTrue(inbox.inbox().find("del-1").isEmpty());
    }

    @Test
    void anEffectThatBulkUpdatesAndThrowsHasTheCommitRefused() {
        transactions.executeWithoutResult(status -> movements.save(new Movement("bulk-0", 4)));

        assertThrows(UnexpectedRollbackException.class, () -> transactions.executeWithoutResult(status -> {
            movements.save(new Movement("bulk-caller", 2));
            assertThrows(IllegalStateException.class, () -> inbox.apply("bulk-1", Content.of(1), tx -> {
                entityManager.createQuery("UPDATE Movement m SET m.qty = 9 WHERE m.receipt = 'bulk-0'").executeUpdate();
                throw new IllegalStateException("effect failed");
            }));
        }));

        assertEquals(4, movements.findById("bulk-0").orElseThrow().qty());
        assertTrue(movements.findById("bulk-caller").isEmpty());
        assertTrue(inbox.inbox().find("bulk-1").isEmpty());
    }

    /**
     * {@code @Transactional} commits on a checked exception; the failed effect marked the transaction
     * rollback-only, so Spring refuses that commit and throws {@code UnexpectedRollbackException}
     * in place of the effect's exception (logging it). Nothing of the transaction is written.
     */
    @Test
    void aCheckedExceptionOfTheEffectLetOutOfATransactionalMethodCommitsNothing() {
        InboxStats before = stats();

        assertThrows(UnexpectedRollbackException.class, () -> receipts.receiveOutOfStock("chk-1", 3));

        assertTrue(movements.findById("chk-1").isEmpty());
        assertTrue(inbox.inbox().find("chk-1").isEmpty());
        assertEquals(before.applied(), stats().applied());
    }

    @Test
    void theSameMessageTwiceInOneTransactionRunsTheEffectOnce() {
        AtomicInteger runs = new AtomicInteger();
        InboxStats before = stats();

        Outcome<?>[] outcomes = transactions.execute(status -> new Outcome<?>[] {
            inbox.apply("twice-1", Content.of(1), tx -> movements.save(new Movement("twice-1", runs.incrementAndGet()))),
            inbox.apply("twice-1", Content.of(1), tx -> movements.save(new Movement("twice-1", runs.incrementAndGet())))
        });

        assertInstanceOf(Outcome.Applied.class, outcomes[0]);
        assertInstanceOf(Outcome.Duplicate.class, outcomes[1]);
        assertEquals(1, runs.get());
        assertEquals(1, movements.findById("twice-1").orElseThrow().qty());
        assertEquals(before.applied() + 1, stats().applied());
    }

    /** The effect's unflushed insert breaks the key only at the commit: Applied was returned, nothing commits or counts. */
    @Test
    void anEffectsWriteThatFailsAtTheCommitCommitsAndCountsNothing() {
        transactions.executeWithoutResult(status -> movements.save(new Movement("late-0", 1)));
        InboxStats before = stats();
        AtomicReference<Outcome<?>> returned = new AtomicReference<>();

        assertThrows(DataIntegrityViolationException.class, () -> transactions.executeWithoutResult(status -> {
            returned.set(inbox.apply("late-1", Content.of(1), tx -> {
                entityManager.persist(new Movement("late-0", 2));
                return 1;
            }));
        }));

        assertInstanceOf(Outcome.Applied.class, returned.get());
        assertTrue(inbox.inbox().find("late-1").isEmpty());
        assertEquals(1, movements.findById("late-0").orElseThrow().qty());
        assertEquals(before.applied(), stats().applied());
    }

    /** The JPA transaction has committed; a call from afterCommit would join nothing that commits. */
    @Test
    void aCallInAfterCommitIsRefusedAsOneInAnEndedTransaction() {
        AtomicReference<Object> result = new AtomicReference<>();

        transactions.executeWithoutResult(status -> TransactionSynchronizationManager.registerSynchronization(
                new TransactionSynchronization() {
                    @Override
                    public void afterCommit() {
                        try {
                            result.set(inbox.apply("after-1", Content.of(1), tx -> movements.save(new Movement("after-1", 1))));
                        } catch (RuntimeException e) {
                            result.set(e);
                        }
                    }
                }));

        assertNotNull(result.get());
        InboxException refused = assertInstanceOf(InboxException.class, result.get());
        assertTrue(refused.getMessage().contains("has ended"), refused.getMessage());
        assertTrue(movements.findById("after-1").isEmpty());
        assertTrue(inbox.inbox().find("after-1").isEmpty());
    }

    /** The caller's backend is terminated with its write pending: the flush before the call fails, nothing is claimed or committed. */
    @Test
    void aConnectionKilledBeforeThePreFlushFailsTheCallBeforeTheClaim() {
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicInteger effects = new AtomicInteger();

        assertThrows(Throwable.class, () -> transactions.executeWithoutResult(status -> {
            movements.save(new Movement("kill-caller", 2));
            int pid = jdbc.sql("SELECT pg_backend_pid()").query(Integer.class).single();
            SCHEMA.execute("SELECT pg_terminate_backend(" + pid + ")");
            failed.set(assertThrows(Throwable.class, () -> inbox.apply("kill-1", Content.of(1), tx -> effects.incrementAndGet())));
        }));

        // The batched flush on the dead connection fails; under -ea the PostgreSQL driver's own assertion
        // (BatchResultHandler.isAutoCommit) throws AssertionError, else a DataAccessException.
        assertNotNull(failed.get());
        assertEquals(0, effects.get());
        assertTrue(movements.findById("kill-caller").isEmpty());
        assertTrue(inbox.inbox().find("kill-1").isEmpty());
        // The pool drops the dead connection; the redelivery applies.
        assertInstanceOf(Outcome.Applied.class, transactions.execute(status -> inbox.apply("kill-1", Content.of(1), tx -> 1)));
    }

    @Autowired
    ReceiptListener listener;

    @Autowired
    ApplicationEventPublisher events;

    /** The usual way to act after a commit: an {@code @TransactionalEventListener(AFTER_COMMIT)} calling the inbox. */
    @Test
    void aTransactionalEventListenerAfterTheCommitIsRefusedAsOneInAnEndedTransaction() {
        transactions.executeWithoutResult(status -> events.publishEvent(new ReceiptListener.Committed("event-1", 1)));

        InboxException refused = assertInstanceOf(InboxException.class, listener.last());
        assertTrue(refused.getMessage().contains("REQUIRES_NEW"), refused.getMessage());
        assertTrue(movements.findById("event-1").isEmpty());
        assertTrue(inbox.inbox().find("event-1").isEmpty());
    }
}
