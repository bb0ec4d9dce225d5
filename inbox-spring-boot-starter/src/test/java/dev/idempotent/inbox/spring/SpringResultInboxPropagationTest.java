package dev.idempotent.inbox.spring;

import static dev.idempotent.inbox.spring.SpringResultInboxTest.TEXT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.StoredResult;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.sqlite.SQLiteDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link SpringResultInbox} under Spring's propagations on real SQLite and PostgreSQL: a result
 * view call of another inbox (its own prefix) nested in an effect, one of the same inbox refused,
 * a NESTED transaction rolled back to its savepoint, a REQUIRES_NEW transaction beside a joined
 * call, and a duplicate in the transaction of its first apply. What is stored, what is counted and what a retry gets are asserted.
 */
class SpringResultInboxPropagationTest {

    enum Database { SQLITE, POSTGRESQL }

    @TempDir
    Path dir;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, InboxAutoConfiguration.class))
            .withPropertyValues("inbox.schema=create", "inbox.tables.prefix=prop_");

    private void run(Database database, Consumer<AssertableApplicationContext> test) {
        switch (database) {
            case SQLITE -> runner.withPropertyValues("spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"))
                    .run(context -> test.accept(started(context)));
            case POSTGRESQL -> {
                try (PostgresSchema schema = new PostgresSchema()) {
                    runner.withPropertyValues("spring.datasource.url=" + schema.url(),
                            "spring.datasource.username=" + PostgresSchema.USER)
                            .run(context -> test.accept(started(context)));
                }
            }
        }
    }

    private static AssertableApplicationContext started(AssertableApplicationContext context) {
        assertThat(context).hasNotFailed();
        new JdbcTemplate(context.getBean(DataSource.class)).execute("CREATE TABLE ledger (id VARCHAR(100) PRIMARY KEY)");
        return context;
    }

    private static SpringResultInbox<String> results(AssertableApplicationContext context) {
        return context.getBean(SpringInbox.class).storingResults(TEXT);
    }

    private static TransactionTemplate transactions(AssertableApplicationContext context, int propagation) {
        TransactionTemplate template = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
        template.setPropagationBehavior(propagation);
        return template;
    }

    private static TransactionTemplate transactions(AssertableApplicationContext context) {
        return transactions(context, TransactionDefinition.PROPAGATION_REQUIRED);
    }

    private static int ledger(AssertableApplicationContext context, String id) {
        return new JdbcTemplate(context.getBean(DataSource.class))
                .queryForObject("SELECT COUNT(*) FROM ledger WHERE id = ?", Integer.class, id);
    }

    private static void write(AssertableApplicationContext context, String id) {
        new JdbcTemplate(context.getBean(DataSource.class)).update("INSERT INTO ledger VALUES (?)", id);
    }

    /** Two inboxes on their own prefixes in one SQLite file, with one transaction manager. */
    private static final class TwoInboxes implements AutoCloseable {
        final SqliteInbox a;
        final SqliteInbox b;
        final TransactionTemplate transactions;
        final SpringResultInbox<String> outer;
        final SpringResultInbox<String> inner;

        TwoInboxes(Path file) {
            SQLiteDataSource dataSource = new SQLiteDataSource();
            dataSource.setUrl("jdbc:sqlite:" + file);
            Jdbi jdbi = Jdbi.create(dataSource);
            jdbi.useHandle(h -> h.execute("CREATE TABLE ledger (id VARCHAR(100) PRIMARY KEY)"));
            a = SqliteInbox.builder(jdbi).name("a").tables(InboxTables.prefix("pa_")).build();
            b = SqliteInbox.builder(jdbi).name("b").tables(InboxTables.prefix("pb_")).build();
            transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
            outer = new SpringInbox(a, dataSource, transactions).storingResults(TEXT);
            inner = new SpringInbox(b, dataSource, transactions).storingResults(TEXT);
        }

        int rows(String table, String id) {
            return a.jdbi().withHandle(h -> h.createQuery("SELECT COUNT(*) FROM " + table + " WHERE id = :id")
                    .bind("id", id).mapTo(Integer.class).one());
        }

        @Override
        public void close() {
            a.close();
            b.close();
        }
    }

    @Test
    void aResultCallOfAnotherInboxInsideAnEffectStoresBothResultsEachInItsOwnPrefixedTable() {
        try (TwoInboxes two = new TwoInboxes(dir.resolve("two.db"))) {
            Outcome<String> outer = two.transactions.execute(status -> two.outer.apply("x-1", Content.of(1), tx -> {
                Outcome<String> inner = two.inner.apply("x-1", Content.of(2), itx -> {
                    itx.execute("INSERT INTO ledger VALUES ('x-1')");
                    return "inner answer";
                });
                return "outer of " + assertInstanceOf(Outcome.Applied.class, inner).result();
            }));

            assertEquals("outer of inner answer", assertInstanceOf(Outcome.Applied.class, outer).result());
            assertEquals(Optional.of("inner answer"), two.inner.findResult("x-1").map(StoredResult::value));
            assertEquals(Optional.of("outer of inner answer"), two.outer.findResult("x-1").map(StoredResult::value));
            assertEquals(1, two.rows("pa_message", "x-1"));
            assertEquals(1, two.rows("pb_message", "x-1"));
            assertEquals(1, two.a.stats().applied());
            assertEquals(1, two.b.stats().applied());
            Outcome<String> again = two.transactions.execute(status -> two.inner.apply("x-1", Content.of(2), tx -> "never"));
            assertEquals("inner answer", assertInstanceOf(Outcome.Duplicate.class, again).result().value());
        }
    }

    @Test
    void anOuterEffectFailingAfterAnInnerResultCallUndoesBothAndTheRetryRunsBoth() {
        try (TwoInboxes two = new TwoInboxes(dir.resolve("fail.db"))) {
            AtomicInteger innerRuns = new AtomicInteger();

            two.transactions.executeWithoutResult(status -> {
                IllegalStateException thrown = assertThrows(IllegalStateException.class, () ->
                        two.outer.apply("y-1", Content.of(1), tx -> {
                            two.inner.apply("y-1", Content.of(1), itx -> {
                                itx.execute("INSERT INTO ledger VALUES ('y-1')");
                                return "inner " + innerRuns.incrementAndGet();
                            });
                            throw new IllegalStateException("the outer effect failed");
                        }));
                assertEquals("the outer effect failed", thrown.getMessage());
                two.inner.apply("y-2", Content.of(2), tx -> "later in the same transaction");
            });

            assertEquals(Optional.empty(), two.inner.findResult("y-1"), "gone with the outer effect's savepoint");
            assertEquals(Optional.empty(), two.outer.findResult("y-1"));
            assertEquals(0, two.rows("ledger", "y-1"));
            assertEquals(Optional.of("later in the same transaction"), two.inner.findResult("y-2").map(StoredResult::value));
            assertEquals(0, two.a.stats().applied());
            assertEquals(1, two.b.stats().applied(), "y-2 only");

            Outcome<String> retry = two.inner.apply("y-1", Content.of(1), tx -> "inner " + innerRuns.incrementAndGet());
            assertEquals("inner 2", assertInstanceOf(Outcome.Applied.class, retry).result());
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aResultCallOfTheSameInboxInsideItsEffectIsRefusedAndNothingOfEitherRemains(Database database) {
        run(database, context -> {
            SpringResultInbox<String> results = results(context);
            JdbiInbox inbox = context.getBean(JdbiInbox.class);

            InboxException refused = assertThrows(InboxException.class, () -> transactions(context).executeWithoutResult(
                    status -> results.apply("same-1", Content.of(1), tx -> {
                        write(context, "same-1");
                        return results.apply("same-2", Content.of(1), itx -> "never").toString();
                    })));

            assertTrue(refused.getMessage().contains("from inside an effect"), refused.getMessage());
            assertEquals(Optional.empty(), results.findResult("same-1"));
            assertEquals(Optional.empty(), results.findResult("same-2"));
            assertEquals(0, ledger(context, "same-1"));
            assertEquals(0, inbox.stats().applied());
        });
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aNestedTransactionRolledBackToItsSavepointStoresNoResultAndTheRetryApplies(Database database) {
        run(database, context -> {
            SpringResultInbox<String> results = results(context);
            JdbiInbox inbox = context.getBean(JdbiInbox.class);

            transactions(context).executeWithoutResult(outer -> {
                write(context, "caller");
                transactions(context, TransactionDefinition.PROPAGATION_NESTED).executeWithoutResult(nested -> {
                    Outcome<String> inside = results.apply("n-1", Content.of(1), tx -> {
                        write(context, "n-1");
                        return "nested answer";
                    });
                    assertInstanceOf(Outcome.Applied.class, inside);
                    nested.setRollbackOnly();
                });
            });

            assertEquals(1, ledger(context, "caller"));
            assertEquals(0, ledger(context, "n-1"));
            assertEquals(Optional.empty(), results.findResult("n-1"), "nothing stored");
            // The documented caveat (RELIABILITY.md): Spring tells no synchronization of a rollback to a
            // savepoint, so the outcome is counted at the outer commit; the database is right.
            assertEquals(1, inbox.stats().applied());

            Outcome<String> retry = transactions(context).execute(status ->
                    results.apply("n-1", Content.of(1), tx -> "retried answer"));
            assertEquals("retried answer", assertInstanceOf(Outcome.Applied.class, retry).result());
            assertEquals(Optional.of("retried answer"), results.findResult("n-1").map(StoredResult::value));
        });
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aDuplicateInTheTransactionOfItsFirstApplyCarriesTheResultNotYetCommitted(Database database) {
        run(database, context -> {
            SpringResultInbox<String> results = results(context);
            AtomicInteger runs = new AtomicInteger();

            Outcome<String> second = transactions(context).execute(status -> {
                results.apply("d-1", Content.of(1), tx -> "first answer " + runs.incrementAndGet());
                return results.apply("d-1", Content.of(1), tx -> "second answer " + runs.incrementAndGet());
            });

            assertEquals(1, runs.get());
            assertEquals("first answer 1", assertInstanceOf(Outcome.Duplicate.class, second).result().value());
            assertEquals(Optional.of("first answer 1"), results.findResult("d-1").map(StoredResult::value));
        });
    }

    /** The inbox refuses a call from inside its own effect, so REQUIRES_NEW is tried beside it. */
    @Test
    void aRequiresNewCallBesideAJoinedOneCommitsOnItsOwnWhenTheOuterRollsBack() {
        run(Database.POSTGRESQL, context -> {
            SpringResultInbox<String> results = results(context);
            JdbiInbox inbox = context.getBean(JdbiInbox.class);

            IllegalStateException thrown = assertThrows(IllegalStateException.class, () ->
                    transactions(context).executeWithoutResult(status -> {
                        assertInstanceOf(Outcome.Applied.class, results.apply("rn-outer", Content.of(1), tx -> "rolled back"));
                        Outcome<String> own = transactions(context, TransactionDefinition.PROPAGATION_REQUIRES_NEW)
                                .execute(inner -> results.apply("rn-inner", Content.of(1), itx -> {
                                    write(context, "rn-inner");
                                    return "committed on its own";
                                }));
                        assertInstanceOf(Outcome.Applied.class, own);
                        assertEquals(1, inbox.stats().applied(), "the REQUIRES_NEW call is counted at its own commit");
                        throw new IllegalStateException("the outer business failed");
                    }));

            assertEquals("the outer business failed", thrown.getMessage());
            assertEquals(Optional.of("committed on its own"), results.findResult("rn-inner").map(StoredResult::value));
            assertEquals(1, ledger(context, "rn-inner"));
            assertEquals(Optional.empty(), results.findResult("rn-outer"));
            assertEquals(1, inbox.stats().applied(), "the rolled-back outer call is not counted");
            Outcome<String> retry = results.apply("rn-outer", Content.of(1), tx -> "outer retried");
            assertEquals("outer retried", assertInstanceOf(Outcome.Applied.class, retry).result());
        });
    }
}
