package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** SpringInbox on SQLite files, with and without a Spring transaction around it. */
class SpringInboxTest {

    @TempDir
    Path dir;

    private SQLiteDataSource file(String name) {
        SQLiteDataSource dataSource = new SQLiteDataSource();
        dataSource.setUrl("jdbc:sqlite:" + dir.resolve(name));
        return dataSource;
    }

    @Test
    void aTransactionOfAnotherDataSourceIsRefusedAndNothingIsRecorded() {
        SQLiteDataSource inboxFile = file("inbox.db");
        SQLiteDataSource otherFile = file("other.db");
        try (SqliteInbox inbox = SqliteInbox.builder(Jdbi.create(inboxFile)).build()) {
            SpringInbox spring = new SpringInbox(inbox, inboxFile, null);
            TransactionTemplate other = new TransactionTemplate(new DataSourceTransactionManager(otherFile));

            InboxException refused = assertThrows(InboxException.class, () -> other.executeWithoutResult(status ->
                    spring.apply("x-1", Content.of(1), tx -> { })));

            assertTrue(refused.getMessage().contains("not one of the inbox's DataSource"), refused.getMessage());
            assertTrue(inbox.find("x-1").isEmpty());
            assertEquals(new InboxStats(0, 0, 0, 0, 0, 0, 0), inbox.stats());
        }
    }

    @Test
    void withoutATransactionManagerTheInboxOpensItsOwnAndTheEffectWritesThroughItsHandle() {
        SQLiteDataSource dataSource = file("app.db");
        Jdbi jdbi = Jdbi.create(dataSource);
        jdbi.useHandle(h -> h.execute("CREATE TABLE stock (total INTEGER NOT NULL)"));
        jdbi.useHandle(h -> h.execute("INSERT INTO stock VALUES (0)"));
        try (SqliteInbox inbox = SqliteInbox.builder(jdbi).build()) {
            SpringInbox spring = new SpringInbox(inbox, dataSource, null);

            Outcome<Integer> outcome = spring.apply("s-1", Content.of(4), tx -> tx.execute("UPDATE stock SET total = total + 4"));
            Outcome<Integer> again = spring.apply("s-1", Content.of(4), tx -> tx.execute("UPDATE stock SET total = total + 4"));

            assertInstanceOf(Outcome.Applied.class, outcome);
            assertInstanceOf(Outcome.Duplicate.class, again);
            int total = jdbi.withHandle(h -> h.createQuery("SELECT total FROM stock").mapTo(Integer.class).one());
            assertEquals(4, total);
            assertEquals(1, inbox.stats().applied());
        }
    }

    @Test
    void withoutATransactionManagerAResultViewStoresInTheInboxsOwnTransaction() {
        SQLiteDataSource dataSource = file("results.db");
        try (SqliteInbox inbox = SqliteInbox.builder(Jdbi.create(dataSource)).build()) {
            SpringResultInbox<String> results = new SpringInbox(inbox, dataSource, null).storingResults(SpringResultInboxTest.TEXT);

            Outcome<String> first = results.apply("v-1", Content.of(1), tx -> "first");
            Outcome<String> again = results.apply("v-1", Content.of(1), tx -> "second");

            assertEquals("first", assertInstanceOf(Outcome.Applied.class, first).result());
            assertEquals("first", assertInstanceOf(Outcome.Duplicate.class, again).result().value());
            assertEquals("test.Text", inbox.find("v-1").orElseThrow().result().orElseThrow().type());
        }
    }

    @Test
    void anOriginTimeBeforeTheHorizonIsRefusedAsStaleInATransactionAndInOneOfItsOwn() {
        SQLiteDataSource dataSource = file("origin.db");
        Instant now = Instant.parse("2026-03-01T00:00:00Z");
        try (SqliteInbox inbox = SqliteInbox.builder(Jdbi.create(dataSource)).clock(Clock.fixed(now, ZoneOffset.UTC))
                .retention(Duration.ofDays(1)).build()) {
            inbox.retention().purge(); // the horizon: a day ago
            TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
            SpringInbox spring = new SpringInbox(inbox, dataSource, transactions);
            Instant twoDaysAgo = now.minus(Duration.ofDays(2));

            assertThrows(StaleMessageException.class, () -> transactions.executeWithoutResult(status ->
                    spring.apply("o-1", Content.of(1), twoDaysAgo, tx -> 1)));
            assertThrows(StaleMessageException.class, () -> spring.apply("o-1", Content.of(1), twoDaysAgo, tx -> 1));
            assertTrue(inbox.find("o-1").isEmpty());
            assertEquals(2, inbox.stats().stale());

            assertInstanceOf(Outcome.Applied.class, spring.apply("o-2", Content.of(2), now.minusSeconds(60), tx -> 2));
            assertInstanceOf(Outcome.Applied.class, spring.apply("o-3", Content.of(3), null, tx -> 3),
                    "no origin time: not judged by it");
        }
    }

    @Test
    void inATransactionTheOutcomeIsCountedAfterTheCommitAndARollbackCountsNothing() {
        SQLiteDataSource dataSource = file("tx.db");
        try (SqliteInbox inbox = SqliteInbox.builder(Jdbi.create(dataSource)).build()) {
            TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
            SpringInbox spring = new SpringInbox(inbox, dataSource, transactions);

            long countedInside = transactions.execute(status -> {
                spring.apply("t-1", Content.of(1), tx -> { });
                return inbox.stats().applied();
            });
            assertEquals(0, countedInside);
            assertEquals(1, inbox.stats().applied());

            transactions.executeWithoutResult(status -> {
                spring.apply("t-2", Content.of(2), tx -> { });
                status.setRollbackOnly();
            });
            assertTrue(inbox.find("t-2").isEmpty());
            assertEquals(1, inbox.stats().attempts(), "the rolled-back call is not counted");
        }
    }

    /**
     * Finding 8: a call made inside another call's effect is gone with that effect's savepoint, and
     * was counted Applied all the same at the commit.
     */
    @Test
    void aCallNestedInAFailedEffectIsNeitherKeptNorCounted() {
        SQLiteDataSource dataSource = file("nested.db");
        Jdbi jdbi = Jdbi.create(dataSource);
        try (SqliteInbox a = SqliteInbox.builder(jdbi).name("a").build();
                SqliteInbox b = SqliteInbox.builder(jdbi).name("b").build()) {
            TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
            SpringInbox outer = new SpringInbox(a, dataSource, transactions);
            SpringInbox inner = new SpringInbox(b, dataSource, transactions);

            transactions.executeWithoutResult(status -> {
                assertThrows(IllegalStateException.class, () -> outer.apply("n-1", Content.of(1), tx -> {
                    assertInstanceOf(Outcome.Applied.class, inner.apply("n-1", Content.of(1), t -> { }));
                    throw new IllegalStateException("the outer effect failed");
                }));
                assertInstanceOf(Outcome.Applied.class, inner.apply("n-2", Content.of(2), t -> { }),
                        "a later call in the same transaction");
            });

            assertTrue(a.find("n-1").isEmpty());
            assertTrue(b.find("n-1").isEmpty(), "gone with the outer effect's savepoint");
            assertTrue(b.find("n-2").isPresent());
            assertEquals(0, a.stats().applied());
            assertEquals(1, b.stats().applied(), "n-2 only");
        }
    }

    /** Three deep: the innermost fails and the middle goes on, then the middle fails and the outer goes on. */
    @Test
    void threeDeepOnlyWhatCommittedIsCounted() {
        SQLiteDataSource dataSource = file("three.db");
        Jdbi jdbi = Jdbi.create(dataSource);
        try (SqliteInbox a = SqliteInbox.builder(jdbi).name("a").build();
                SqliteInbox b = SqliteInbox.builder(jdbi).name("b").build();
                SqliteInbox c = SqliteInbox.builder(jdbi).name("c").build()) {
            TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
            SpringInbox outer = new SpringInbox(a, dataSource, transactions);
            SpringInbox middle = new SpringInbox(b, dataSource, transactions);
            SpringInbox innermost = new SpringInbox(c, dataSource, transactions);

            transactions.executeWithoutResult(status -> {
                outer.apply("1", Content.of(1), tx -> {
                    middle.apply("1", Content.of(1), t -> {
                        assertThrows(IllegalStateException.class, () -> innermost.apply("1", Content.of(1), u -> {
                            throw new IllegalStateException("the innermost failed");
                        }));
                    });
                });
                outer.apply("2", Content.of(2), tx -> {
                    assertThrows(IllegalStateException.class, () -> middle.apply("2", Content.of(2), t -> {
                        innermost.apply("2", Content.of(2), u -> { });
                        throw new IllegalStateException("the middle failed");
                    }));
                });
            });

            assertTrue(a.find("1").isPresent() && a.find("2").isPresent());
            assertTrue(b.find("1").isPresent() && b.find("2").isEmpty());
            assertTrue(c.find("1").isEmpty() && c.find("2").isEmpty());
            assertEquals(2, a.stats().applied());
            assertEquals(1, b.stats().applied());
            assertEquals(0, c.stats().applied());
        }
    }
}
