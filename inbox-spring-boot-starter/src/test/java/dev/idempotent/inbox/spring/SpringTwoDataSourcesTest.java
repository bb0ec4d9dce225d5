package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.postgres.PostgresInbox;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * SpringInbox in an application with two data sources, each a Hikari pool that hands out connections
 * with autocommit off (a common setting beside Hibernate), on the real PostgreSQL: the inbox works
 * in the first; a transaction of the second is refused, for the inbox's record could not commit
 * with the effect's writes there.
 */
@SpringBootTest(classes = SpringTwoDataSourcesTest.TwoDataSources.class,
        properties = {"inbox.name=orders", "inbox.schema=create"})
@DirtiesContext
class SpringTwoDataSourcesTest {

    private static final String STOCK = "CREATE TABLE stock (item TEXT PRIMARY KEY, total BIGINT NOT NULL)";
    private static final String SNACKS = "INSERT INTO stock VALUES ('snack', 0)";
    private static final PostgresSchema INBOX_DATABASE = new PostgresSchema(STOCK, SNACKS);
    private static final PostgresSchema OTHER_DATABASE = new PostgresSchema(STOCK, SNACKS);

    @AfterAll
    static void dropSchemas() {
        INBOX_DATABASE.close();
        OTHER_DATABASE.close();
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(InboxAutoConfiguration.class)
    static class TwoDataSources {

        private static HikariDataSource pool(PostgresSchema schema, String name) {
            HikariDataSource pool = new HikariDataSource();
            pool.setPoolName(name);
            pool.setJdbcUrl(schema.url());
            pool.setUsername(PostgresSchema.USER);
            pool.setAutoCommit(false);
            pool.setMaximumPoolSize(4);
            return pool;
        }

        @Bean
        @Primary
        HikariDataSource inboxDataSource() {
            return pool(INBOX_DATABASE, "inbox");
        }

        @Bean
        HikariDataSource otherDataSource() {
            return pool(OTHER_DATABASE, "other");
        }

        @Bean
        @Primary
        DataSourceTransactionManager inboxTransactionManager(@Qualifier("inboxDataSource") DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        DataSourceTransactionManager otherTransactionManager(@Qualifier("otherDataSource") DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Autowired
    SpringInbox inbox;

    @Autowired
    @Qualifier("inboxDataSource")
    HikariDataSource inboxDataSource;

    @Autowired
    @Qualifier("otherDataSource")
    HikariDataSource otherDataSource;

    @Autowired
    @Qualifier("inboxTransactionManager")
    PlatformTransactionManager inboxTransactionManager;

    @Autowired
    @Qualifier("otherTransactionManager")
    PlatformTransactionManager otherTransactionManager;

    private JdbiInbox raw() {
        return inbox.inbox();
    }

    private static long stock(DataSource dataSource) {
        return new TransactionTemplate(new DataSourceTransactionManager(dataSource)).execute(status ->
                JdbcClient.create(dataSource).sql("SELECT total FROM stock WHERE item = 'snack'").query(Long.class).single());
    }

    private static int addFive(DataSource dataSource) {
        return JdbcClient.create(dataSource).sql("UPDATE stock SET total = total + 5 WHERE item = 'snack'").update();
    }

    /** Finding 5: the claim went to a connection nobody committed, and every redelivery applied again. */
    @Test
    void aTransactionOfAnotherDataSourceIsRefusedBeforeTheEffectRuns() {
        InboxStats before = raw().stats();
        long otherBefore = stock(otherDataSource);
        TransactionTemplate other = new TransactionTemplate(otherTransactionManager);

        for (int delivery = 1; delivery <= 2; delivery++) {
            InboxException refused = assertThrows(InboxException.class, () -> other.executeWithoutResult(status ->
                    inbox.apply("m-1", Content.of(5), tx -> addFive(otherDataSource))));
            assertTrue(refused.getMessage().contains("not one of the inbox's DataSource"), refused.getMessage());
        }

        assertEquals(otherBefore, stock(otherDataSource), "the effect never ran");
        assertTrue(raw().find("m-1").isEmpty());
        assertEquals(before, raw().stats(), "nothing counted");
        assertEquals(0, inboxDataSource.getHikariPoolMXBean().getActiveConnections(), "no connection of the inbox's held");
    }

    /**
     * Spring binds a connection of the inbox's data source to the thread when something reads through
     * it inside the other transaction, for the rest of that transaction, yet begins no transaction on it.
     */
    @Test
    void aConnectionOfTheInboxsDataSourceBoundWithoutATransactionIsRefusedToo() {
        long otherBefore = stock(otherDataSource);
        TransactionTemplate other = new TransactionTemplate(otherTransactionManager);

        InboxException refused = assertThrows(InboxException.class, () -> other.executeWithoutResult(status -> {
            stockThroughSpring(inboxDataSource);
            inbox.apply("b-1", Content.of(5), tx -> addFive(otherDataSource));
        }));

        assertTrue(refused.getMessage().contains("not one of the inbox's DataSource"), refused.getMessage());
        assertEquals(otherBefore, stock(otherDataSource));
        assertTrue(raw().find("b-1").isEmpty());
        assertEquals(0, inboxDataSource.getHikariPoolMXBean().getActiveConnections());
    }

    private static long stockThroughSpring(DataSource dataSource) {
        return JdbcClient.create(dataSource).sql("SELECT total FROM stock WHERE item = 'snack'").query(Long.class).single();
    }

    @Test
    void aTransactionOfTheInboxsDataSourceJoinsOnAPoolWithAutoCommitOff() {
        InboxStats before = raw().stats();
        long stockBefore = stock(inboxDataSource);
        TransactionTemplate transactions = new TransactionTemplate(inboxTransactionManager);

        Outcome<Integer> first = transactions.execute(status ->
                inbox.apply("j-1", Content.of(5), tx -> addFive(inboxDataSource)));
        Outcome<Integer> again = transactions.execute(status ->
                inbox.apply("j-1", Content.of(5), tx -> addFive(inboxDataSource)));

        assertInstanceOf(Outcome.Applied.class, first);
        assertInstanceOf(Outcome.Duplicate.class, again);
        assertEquals(stockBefore + 5, stock(inboxDataSource));
        assertEquals(before.applied() + 1, raw().stats().applied());
        assertEquals(before.duplicates() + 1, raw().stats().duplicates());
    }

    @Test
    void outsideATransactionItOpensOneOfTheInboxsDataSource() {
        long stockBefore = stock(inboxDataSource);

        Outcome<Integer> outcome = inbox.apply("o-1", Content.of(5), tx -> addFive(inboxDataSource));

        assertInstanceOf(Outcome.Applied.class, outcome);
        assertEquals(stockBefore + 5, stock(inboxDataSource), "committed, not left on a connection nobody commits");
        assertTrue(raw().find("o-1").isPresent());
    }

    /** Under a JDBC transaction manager a failed effect's savepoint is rolled back and the transaction goes on. */
    @Test
    void aFailedEffectLeavesAJdbcTransactionUsable() {
        long stockBefore = stock(inboxDataSource);
        TransactionTemplate transactions = new TransactionTemplate(inboxTransactionManager);

        transactions.executeWithoutResult(status -> {
            assertThrows(IllegalStateException.class, () -> inbox.apply("u-1", Content.of(5), tx -> {
                addFive(inboxDataSource);
                throw new IllegalStateException("effect failed");
            }));
            assertFalse(status.isRollbackOnly());
            JdbcClient.create(inboxDataSource).sql("UPDATE stock SET total = total + 1 WHERE item = 'snack'").update();
        });

        assertEquals(stockBefore + 1, stock(inboxDataSource), "the caller's own write committed, the effect's did not");
        assertTrue(raw().find("u-1").isEmpty());
    }

    /**
     * A call in a transaction of its own (REQUIRES_NEW) inside an effect commits on its own: the
     * enclosing effect's failure does not take it along, and it is counted once.
     */
    @Test
    void aCallInANewTransactionInsideAFailedEffectStaysCommittedAndCounted() {
        TransactionTemplate transactions = new TransactionTemplate(inboxTransactionManager);
        TransactionTemplate newTransaction = new TransactionTemplate(inboxTransactionManager);
        newTransaction.setPropagationBehavior(TransactionTemplate.PROPAGATION_REQUIRES_NEW);
        IllegalStateException failure = new IllegalStateException("the outer effect failed");
        try (PostgresInbox innerInbox = PostgresInbox.builder(Jdbi.create(inboxDataSource)).name("inner")
                .schema(SchemaMode.CREATE).build()) {
            SpringInbox inner = new SpringInbox(innerInbox, inboxDataSource, null);

            IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> transactions
                    .executeWithoutResult(status -> inbox.apply("r-1", Content.of(1), tx -> {
                        newTransaction.executeWithoutResult(own -> inner.apply("r-1", Content.of(1), t -> 1));
                        throw failure;
                    })));

            assertSame(failure, thrown, "the effect's own exception, unchanged");
            assertTrue(raw().find("r-1").isEmpty());
            assertTrue(innerInbox.find("r-1").isPresent(), "committed in its own transaction");
            assertEquals(1, innerInbox.stats().applied());
        }
    }

    @Test
    void aReadOnlyTransactionIsRefusedBeforeTheClaim() {
        TransactionTemplate readOnly = new TransactionTemplate(inboxTransactionManager);
        readOnly.setReadOnly(true);

        InboxException refused = assertThrows(InboxException.class, () -> readOnly.executeWithoutResult(status ->
                inbox.apply("ro-1", Content.of(1), tx -> addFive(inboxDataSource))));

        assertTrue(refused.getMessage().contains("read-only"), refused.getMessage());
        assertTrue(raw().find("ro-1").isEmpty());
    }

    /**
     * The inbox's own transactions (its apply without a transaction manager, its purge) on a pool
     * that hands out autocommit off: the auto-configured inbox switches its connections to
     * autocommit, and the pool gets them back as it gave them.
     */
    @Test
    void theInboxsOwnTransactionsCommitOnAPoolWithAutoCommitOff() throws Exception {
        long stockBefore = stock(inboxDataSource);

        Outcome<Integer> outcome = raw().apply("own-1", Content.of(5),
                tx -> tx.execute("UPDATE stock SET total = total + 5 WHERE item = 'snack'"));
        Outcome<Integer> again = raw().apply("own-1", Content.of(5),
                tx -> tx.execute("UPDATE stock SET total = total + 5 WHERE item = 'snack'"));
        raw().retention().purge();

        assertInstanceOf(Outcome.Applied.class, outcome);
        assertInstanceOf(Outcome.Duplicate.class, again);
        assertEquals(stockBefore + 5, stock(inboxDataSource));
        assertTrue(raw().find("own-1").isPresent());
        assertEquals(0, inboxDataSource.getHikariPoolMXBean().getActiveConnections());
        try (java.sql.Connection connection = inboxDataSource.getConnection()) {
            assertFalse(connection.getAutoCommit(), "the pool's own setting, restored");
        }
    }
}
