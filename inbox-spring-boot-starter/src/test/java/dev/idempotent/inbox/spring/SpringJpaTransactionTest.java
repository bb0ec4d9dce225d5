package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.spring.app.Movement;
import dev.idempotent.inbox.spring.app.MovementRepository;
import dev.idempotent.inbox.spring.app.ReceiptApplication;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.FlushModeType;
import jakarta.persistence.PersistenceContext;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.orm.jpa.EntityManagerHolder;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * SpringInbox under Spring Boot's {@link JpaTransactionManager} with Hibernate, on the real
 * PostgreSQL: an effect that fails leaves none of its changes committed (its entity writes are in
 * Hibernate's persistence context, which no savepoint covers, so the commit is refused), and the
 * caller's own pending writes are flushed before the inbox's savepoint, never lost inside it.
 */
@SpringBootTest(classes = ReceiptApplication.class)
@DirtiesContext
class SpringJpaTransactionTest {

    private static final PostgresSchema SCHEMA = new PostgresSchema(
            "CREATE TABLE stock (item TEXT PRIMARY KEY, total BIGINT NOT NULL)",
            "INSERT INTO stock VALUES ('snack', 0)",
            "CREATE TABLE movement (receipt TEXT PRIMARY KEY, qty INTEGER NOT NULL)");

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", SCHEMA::url);
        registry.add("spring.datasource.username", () -> PostgresSchema.USER);
        registry.add("spring.jpa.hibernate.ddl-auto", () -> "validate");
        registry.add("spring.jpa.open-in-view", () -> "false");
        registry.add("spring.flyway.enabled", () -> "false");
        registry.add("inbox.name", () -> "jpa");
        registry.add("inbox.schema", () -> "create");
        registry.add("inbox.max-result-bytes", () -> "64");
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
    JdbcClient jdbc;

    @Autowired
    PlatformTransactionManager transactionManager;

    @PersistenceContext
    EntityManager entityManager;

    @Autowired
    EntityManagerFactory factory;

    TransactionTemplate transactions;

    @BeforeEach
    void transactions() {
        assertInstanceOf(JpaTransactionManager.class, transactionManager, "Boot's JPA transaction manager");
        transactions = new TransactionTemplate(transactionManager);
    }

    private JdbiInbox raw() {
        return inbox.inbox();
    }

    @Test
    void aStoredResultCommitsWithTheJpaTransactionAndADuplicateCarriesIt() {
        SpringResultInbox<String> results = inbox.storingResults(SpringResultInboxTest.TEXT);
        long appliedBefore = raw().stats().applied();

        Outcome<String> first = transactions.execute(status -> results.apply("r-1", Content.of(1), tx ->
                movements.save(new Movement("r-1", 3)).receipt() + " booked"));
        Outcome<String> again = transactions.execute(status -> results.apply("r-1", Content.of(1), tx -> "never"));

        assertEquals("r-1 booked", assertInstanceOf(Outcome.Applied.class, first).result());
        assertEquals("r-1 booked", assertInstanceOf(Outcome.Duplicate.class, again).result().value());
        assertEquals(3, movements.findById("r-1").orElseThrow().qty());
        assertEquals(appliedBefore + 1, raw().stats().applied());
    }

    @Test
    void aResultOverTheLimitFailsLikeAnEffectAndTheJpaCommitIsRefused() {
        SpringResultInbox<String> results = inbox.storingResults(SpringResultInboxTest.TEXT);

        assertThrows(UnexpectedRollbackException.class, () -> transactions.executeWithoutResult(status -> {
            dev.idempotent.inbox.StoredResultException tooLarge = assertThrows(
                    dev.idempotent.inbox.StoredResultException.class, () -> results.apply("r-2", Content.of(1), tx -> {
                        movements.save(new Movement("r-2", 1));
                        return "y".repeat(65);
                    }));
            assertEquals(dev.idempotent.inbox.StoredResultException.Kind.TOO_LARGE, tooLarge.kind());
        }));

        assertTrue(movements.findById("r-2").isEmpty(), "the effect's entity was not committed");
        assertTrue(results.findResult("r-2").isEmpty(), "nothing stored");
        Outcome<String> retry = transactions.execute(status -> results.apply("r-2", Content.of(1), tx -> "small"));
        assertInstanceOf(Outcome.Applied.class, retry, "the retry runs again");
    }

    /** Finding 4(a): an entity saved by a failed effect was flushed at the commit, without its claim. */
    @Test
    void anEffectThatSavesAnEntityAndThrowsHasTheCommitRefused() {
        InboxStats before = raw().stats();
        IllegalStateException failure = new IllegalStateException("effect failed");
        AtomicReference<Exception> caught = new AtomicReference<>();

        assertThrows(UnexpectedRollbackException.class, () -> transactions.executeWithoutResult(status ->
                caught.set(assertThrows(IllegalStateException.class, () -> inbox.apply("a-1", Content.of(1), tx -> {
                    movements.save(new Movement("a-1", 1));
                    throw failure;
                })))));

        assertSame(failure, caught.get(), "the effect's own exception, unchanged");
        assertTrue(movements.findById("a-1").isEmpty(), "the failed effect's entity was not committed");
        assertTrue(raw().find("a-1").isEmpty());
        assertEquals(before.applied(), raw().stats().applied());

        Outcome<Movement> again = transactions.execute(status ->
                inbox.apply("a-1", Content.of(1), tx -> movements.save(new Movement("a-1", 1))));
        assertInstanceOf(Outcome.Applied.class, again, "the redelivery applies, once");
        assertEquals(1, movements.findById("a-1").orElseThrow().qty());
        assertEquals(before.applied() + 1, raw().stats().applied());
    }

    /**
     * Finding 4(b): the caller's pending write, auto-flushed by the effect's query inside the
     * savepoint, was rolled back with it while Hibernate took it as written.
     */
    @Test
    void theCallersPendingWritesAreFlushedBeforeTheSavepoint() {
        assertThrows(UnexpectedRollbackException.class, () -> transactions.executeWithoutResult(status -> {
            movements.save(new Movement("b-caller", 2));
            assertThrows(IllegalStateException.class, () -> inbox.apply("b-1", Content.of(1), tx -> {
                movements.count(); // a query over movement: Hibernate flushes the pending insert first
                throw new IllegalStateException("effect failed");
            }));
            // On the transaction's own connection: the caller's row outlived the savepoint's rollback.
            assertEquals(1L, jdbc.sql("SELECT count(*) FROM movement WHERE receipt = 'b-caller'")
                    .query(Long.class).single(), "the caller's write is not inside the inbox's savepoint");
        }));

        assertTrue(movements.findById("b-caller").isEmpty(), "the refused commit wrote nothing");
        assertTrue(raw().find("b-1").isEmpty());

        // With an effect that succeeds, the caller's flushed write commits with the claim.
        transactions.executeWithoutResult(status -> {
            movements.save(new Movement("b-caller", 2));
            inbox.apply("b-1", Content.of(1), tx -> movements.count());
        });
        assertEquals(2, movements.findById("b-caller").orElseThrow().qty());
        assertTrue(raw().find("b-1").isPresent());
    }

    /** Finding 4(c): a failed effect's change to a managed entity was written by a later flush. */
    @Test
    void anEffectThatChangesAManagedEntityAndThrowsHasTheCommitRefused() {
        transactions.executeWithoutResult(status -> movements.save(new Movement("c-0", 1)));

        assertThrows(UnexpectedRollbackException.class, () -> transactions.executeWithoutResult(status -> {
            Movement managed = movements.findById("c-0").orElseThrow();
            assertThrows(IllegalStateException.class, () -> inbox.apply("c-1", Content.of(1), tx -> {
                managed.qty(99);
                throw new IllegalStateException("effect failed");
            }));
            movements.flush();
        }));

        assertEquals(1, movements.findById("c-0").orElseThrow().qty(), "the failed effect's change was not committed");
        assertTrue(raw().find("c-1").isEmpty());
    }

    @Test
    void anEffectsExceptionLetThroughRollsTheTransactionBackAndReachesTheCallerUnchanged() {
        IllegalStateException failure = new IllegalStateException("effect failed");

        IllegalStateException thrown = assertThrows(IllegalStateException.class, () ->
                transactions.executeWithoutResult(status -> inbox.apply("d-1", Content.of(1), tx -> {
                    movements.save(new Movement("d-1", 1));
                    throw failure;
                })));

        assertSame(failure, thrown);
        assertTrue(movements.findById("d-1").isEmpty());
        assertTrue(raw().find("d-1").isEmpty());
    }

    /** With flush mode COMMIT no query flushes inside the savepoint; the call's own flush still comes first. */
    @Test
    void underFlushModeCommitTheCallersPendingWritesAreFlushedBeforeTheSavepointToo() {
        assertThrows(UnexpectedRollbackException.class, () -> transactions.executeWithoutResult(status -> {
            entityManager.setFlushMode(FlushModeType.COMMIT);
            movements.save(new Movement("f-caller", 2));
            assertThrows(IllegalStateException.class, () -> inbox.apply("f-1", Content.of(1), tx -> {
                movements.save(new Movement("f-1", 1));
                movements.count();
                throw new IllegalStateException("effect failed");
            }));
            assertEquals(1L, jdbc.sql("SELECT count(*) FROM movement WHERE receipt = 'f-caller'").query(Long.class).single());
        }));

        assertTrue(movements.findById("f-caller").isEmpty());
        assertTrue(movements.findById("f-1").isEmpty());
        assertTrue(raw().find("f-1").isEmpty());
    }

    /** A caller's pending write that the database refuses fails the call before its claim, as Spring translates it. */
    @Test
    void aCallersPendingWriteThatFailsToFlushFailsTheCallBeforeTheEffect() {
        transactions.executeWithoutResult(status -> movements.save(new Movement("g-0", 1)));
        AtomicBoolean ran = new AtomicBoolean();

        assertThrows(DataIntegrityViolationException.class, () -> transactions.executeWithoutResult(status -> {
            entityManager.persist(new Movement("g-0", 2));
            inbox.apply("g-1", Content.of(1), tx -> ran.getAndSet(true));
        }));

        assertFalse(ran.get(), "the effect did not run");
        assertTrue(raw().find("g-1").isEmpty());
        assertEquals(1, movements.findById("g-0").orElseThrow().qty());
    }

    @Test
    void aReadOnlyJpaTransactionIsRefusedBeforeTheClaim() {
        TransactionTemplate readOnly = new TransactionTemplate(transactionManager);
        readOnly.setReadOnly(true);

        assertThrows(InboxException.class, () -> readOnly.executeWithoutResult(status ->
                inbox.apply("h-1", Content.of(1), tx -> movements.save(new Movement("h-1", 1)))));

        assertTrue(movements.findById("h-1").isEmpty());
        assertTrue(raw().find("h-1").isEmpty());
    }

    /**
     * An entity manager bound before the transaction (open-in-view) outlives it: the refused commit
     * must not leave the failed effect's entity in it for the request's next transaction to write.
     */
    @Test
    void aPreBoundEntityManagerKeepsNothingOfTheFailedEffectForTheNextTransaction() {
        EntityManager preBound = factory.createEntityManager();
        TransactionSynchronizationManager.bindResource(factory, new EntityManagerHolder(preBound));
        try {
            assertThrows(UnexpectedRollbackException.class, () -> transactions.executeWithoutResult(status -> {
                assertTrue(preBound.getTransaction().isActive(), "the transaction took the pre-bound entity manager");
                assertThrows(IllegalStateException.class, () -> inbox.apply("v-1", Content.of(1), tx -> {
                    movements.save(new Movement("v-1", 1));
                    throw new IllegalStateException("effect failed");
                }));
            }));

            transactions.executeWithoutResult(status -> movements.save(new Movement("v-next", 1)));
        } finally {
            TransactionSynchronizationManager.unbindResource(factory);
            preBound.close();
        }

        assertTrue(movements.findById("v-next").isPresent());
        assertTrue(movements.findById("v-1").isEmpty(), "the failed effect's entity was not written by the next transaction");
        assertTrue(raw().find("v-1").isEmpty());
    }

    /** Only an effect that ran and failed marks the transaction: a duplicate, a conflict or a refused id leave it usable. */
    @Test
    void anOutcomeOrARefusalBeforeTheEffectLeavesAJpaTransactionUsable() {
        transactions.executeWithoutResult(status -> inbox.apply("e-1", Content.of(1), tx -> 1));

        transactions.executeWithoutResult(status -> {
            movements.save(new Movement("e-caller", 3));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("e-1", Content.of(1), tx -> 1));
            assertInstanceOf(Outcome.Conflict.class, inbox.apply("e-1", Content.of(2), tx -> 1));
            assertThrows(InboxException.class, () -> inbox.apply("bad\nid", Content.of(1), tx -> 1));
            assertFalse(status.isRollbackOnly());
        });

        assertEquals(3, movements.findById("e-caller").orElseThrow().qty());
    }
}
