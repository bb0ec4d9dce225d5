package dev.idempotent.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.StoredResult;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link SpringInbox#storingResults} on real SQLite and PostgreSQL, with the auto-configured inbox
 * on renamed tables and Spring's {@code DataSourceTransactionManager}: the result commits or rolls
 * back with the caller's transaction, a duplicate carries it, and {@code inbox.max-result-bytes}
 * limits it.
 */
class SpringResultInboxTest {

    /** A string as its UTF-8 bytes. */
    static final ResultCodec<String> TEXT = new ResultCodec<>() {
        @Override
        public String type() {
            return "test.Text";
        }

        @Override
        public int version() {
            return 1;
        }

        @Override
        public byte[] encode(String result) {
            return result.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes, int version) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
    };

    enum Database { SQLITE, POSTGRESQL }

    @TempDir
    Path dir;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, InboxAutoConfiguration.class))
            .withPropertyValues("inbox.schema=create", "inbox.tables.prefix=res_", "inbox.max-result-bytes=64");

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

    private static TransactionTemplate transactions(AssertableApplicationContext context) {
        return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
    }

    private static int ledger(AssertableApplicationContext context, String id) {
        return new JdbcTemplate(context.getBean(DataSource.class))
                .queryForObject("SELECT COUNT(*) FROM ledger WHERE id = ?", Integer.class, id);
    }

    private static void write(AssertableApplicationContext context, String id) {
        new JdbcTemplate(context.getBean(DataSource.class)).update("INSERT INTO ledger VALUES (?)", id);
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aCallOutsideATransactionStoresTheResultOnTheRenamedTablesAndADuplicateCarriesIt(Database database) {
        run(database, context -> {
            SpringResultInbox<String> results = results(context);

            Outcome<String> first = results.apply("r-1", Content.of(1), tx -> {
                write(context, "r-1");
                return "order 17";
            });
            Outcome<String> again = results.apply("r-1", Content.of(1), tx -> "never");

            assertEquals("order 17", assertInstanceOf(Outcome.Applied.class, first).result());
            assertEquals("order 17", assertInstanceOf(Outcome.Duplicate.class, again).result().value());
            assertEquals(Optional.of("order 17"), results.findResult("r-1").map(StoredResult::value));
            assertEquals(1, ledger(context, "r-1"));
            JdbiInbox inbox = context.getBean(JdbiInbox.class);
            int stored = inbox.jdbi().withHandle(h -> h.createQuery("SELECT COUNT(*) FROM res_message WHERE id = 'r-1'"
                    + " AND result IS NOT NULL").mapTo(Integer.class).one());
            assertEquals(1, stored, "the result is in the prefixed table");
            assertEquals(1, inbox.stats().applied());
            assertEquals(1, inbox.stats().duplicates());
        });
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aJoinedCallsResultCommitsWithTheCallersTransactionAndIsCountedAfterTheCommit(Database database) {
        run(database, context -> {
            SpringResultInbox<String> results = results(context);
            JdbiInbox inbox = context.getBean(JdbiInbox.class);

            Outcome<String> outcome = transactions(context).execute(status -> {
                Outcome<String> inside = results.apply("j-1", Content.of(1), tx -> {
                    write(context, "j-1");
                    return "booking 4";
                });
                assertEquals(0, inbox.stats().applied(), "not counted before the commit");
                return inside;
            });

            assertEquals("booking 4", assertInstanceOf(Outcome.Applied.class, outcome).result());
            assertEquals(1, inbox.stats().applied());
            assertEquals(1, ledger(context, "j-1"));
            Outcome<String> again = transactions(context).execute(status -> results.apply("j-1", Content.of(1), tx -> "never"));
            assertEquals("booking 4", assertInstanceOf(Outcome.Duplicate.class, again).result().value());
        });
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aRollbackOfTheSpringTransactionAfterTheCallStoresNothingAndTheRetryRunsAgain(Database database) {
        run(database, context -> {
            SpringResultInbox<String> results = results(context);
            JdbiInbox inbox = context.getBean(JdbiInbox.class);
            AtomicInteger runs = new AtomicInteger();

            IllegalStateException thrown = assertThrows(IllegalStateException.class, () ->
                    transactions(context).executeWithoutResult(status -> {
                        results.apply("b-1", Content.of(1), tx -> {
                            write(context, "b-1");
                            return "first answer " + runs.incrementAndGet();
                        });
                        throw new IllegalStateException("the business failed after the call");
                    }));

            assertEquals("the business failed after the call", thrown.getMessage());
            assertEquals(Optional.empty(), results.findResult("b-1"), "nothing stored");
            assertEquals(0, ledger(context, "b-1"));
            assertEquals(0, inbox.stats().applied(), "a rolled-back outcome is never counted");

            Outcome<String> retry = transactions(context).execute(status -> results.apply("b-1", Content.of(1),
                    tx -> "retried answer " + runs.incrementAndGet()));

            assertEquals("retried answer 2", assertInstanceOf(Outcome.Applied.class, retry).result());
            assertEquals(Optional.of("retried answer 2"), results.findResult("b-1").map(StoredResult::value));
        });
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aResultOverInboxMaxResultBytesFailsTheCallAndNothingOfItRemains(Database database) {
        run(database, context -> {
            SpringResultInbox<String> results = results(context);
            String large = "x".repeat(65);

            // In a transaction of its own: it rolls back whole.
            StoredResultException own = assertThrows(StoredResultException.class, () ->
                    results.apply("big-1", Content.of(1), tx -> {
                        write(context, "big-1");
                        return large;
                    }));
            assertEquals(StoredResultException.Kind.TOO_LARGE, own.kind());
            assertEquals(0, ledger(context, "big-1"));
            assertTrue(context.getBean(JdbiInbox.class).find("big-1").isEmpty());

            // In the caller's: the call's savepoint goes; the caller's own work may still commit.
            transactions(context).executeWithoutResult(status -> {
                write(context, "caller");
                StoredResultException joined = assertThrows(StoredResultException.class, () ->
                        results.apply("big-2", Content.of(1), tx -> {
                            write(context, "big-2");
                            return large;
                        }));
                assertEquals(StoredResultException.Kind.TOO_LARGE, joined.kind());
            });
            assertEquals(1, ledger(context, "caller"));
            assertEquals(0, ledger(context, "big-2"));
            assertTrue(context.getBean(JdbiInbox.class).find("big-2").isEmpty());

            // Within the limit, the retry applies.
            Outcome<String> retry = results.apply("big-2", Content.of(1), tx -> "x".repeat(64));
            assertInstanceOf(Outcome.Applied.class, retry);
            assertEquals(64, context.getBean(JdbiInbox.class).settings().maxResultBytes());
        });
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aReadOnlyTransactionIsRefusedAsSpringInboxRefusesIt(Database database) {
        run(database, context -> {
            TransactionTemplate readOnly = transactions(context);
            readOnly.setReadOnly(true);
            AtomicInteger runs = new AtomicInteger();

            InboxException refused = assertThrows(InboxException.class, () -> readOnly.executeWithoutResult(status ->
                    results(context).apply("ro-1", Content.of(1), tx -> "answer " + runs.incrementAndGet())));

            assertTrue(refused.getMessage().contains("read-only"), refused.getMessage());
            assertEquals(0, runs.get());
            assertTrue(context.getBean(JdbiInbox.class).find("ro-1").isEmpty());
        });
    }
}
