package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.testkit.Stock;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What SQLite adds to joined calls and to effects in general: a second writer opened from inside
 * an effect fails at once instead of waiting out the busy timeout, a transaction that cannot take
 * the write lock is reported as busy by name, a connection to another file is refused, and an
 * effect's commit or rollback through Jdbi (which Jdbi itself would ignore here) is refused.
 */
class SqliteJoinedTest {

    @TempDir
    Path directory;
    private SqliteInbox inbox;
    private Stock stock;

    @BeforeEach
    void open() {
        inbox = SqliteInbox.builder(directory.resolve("stock.db")).name("joined").build();
        stock = Stock.create(inbox.jdbi(), "joined");
    }

    @AfterEach
    void close() {
        inbox.close();
    }

    private long rows() {
        return Stock.inboxRows(inbox.jdbi(), "joined");
    }

    @Test
    void aWriteThroughTheInboxsJdbiInsideAnEffectFailsAtOnceByName() {
        InboxException refused = assertThrows(InboxException.class, () -> inbox.apply("snack-7", Content.of(7), tx -> {
            stock.add(tx, 7);
            try (Handle second = inbox.jdbi().open()) {
                return second.execute("UPDATE stock SET total = total + 1");
            }
        }));
        assertTrue(refused.getMessage().contains("another connection"), refused.getMessage());
        assertEquals(FailureKind.PERMANENT, FailureKind.of(refused), "a misuse, not a busy database");
        assertEquals(0, rows());
        assertEquals(0, stock.total());
        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> stock.add(tx, 7)),
                "the inbox goes on; handles opened outside effects are untouched");
    }

    @Test
    void anotherInboxOnTheSameFileAppliedInsideAnEffectFailsAtOnce() {
        try (SqliteInbox other = SqliteInbox.builder(directory.resolve("stock.db")).name("other").build()) {
            InboxException refused = assertThrows(InboxException.class,
                    () -> inbox.apply("snack-7", Content.of(7), tx -> other.apply("x", Content.of(1), t -> 1)));
            assertTrue(refused.getMessage().contains("write lock"), refused.getMessage());
            assertEquals(FailureKind.PERMANENT, FailureKind.of(refused));
            assertEquals(0, Stock.inboxRows(inbox.jdbi(), "other"));
            assertEquals(0, rows());
        }
    }

    @Test
    void aJoinedEffectThatWritesThroughTheInboxsJdbiFailsAtOnceButMayRead() {
        try (Handle caller = inbox.jdbi().open()) {
            caller.begin();
            assertThrows(InboxException.class, () -> inbox.applyIn(caller, "snack-7", Content.of(7), tx -> {
                try (Handle second = inbox.jdbi().open()) {
                    assertEquals(0L, second.createQuery("SELECT total FROM stock WHERE name = 'joined'")
                            .mapTo(Long.class).one(), "a read from another connection sees the committed file");
                    return second.execute("UPDATE stock SET total = total + 1");
                }
            }));
            caller.commit();
        }
        assertEquals(0, rows());
    }

    @Test
    void aReadTransactionThatCannotTakeTheWriteLockIsReportedBusyByName() {
        Jdbi jdbi = inbox.jdbi();
        try (Handle reader = jdbi.open()) {
            reader.begin();
            // The deferred transaction's snapshot starts with this read ...
            assertEquals(0L, reader.createQuery("SELECT total FROM stock WHERE name = 'joined'").mapTo(Long.class).one());
            // ... then another connection commits a write, so that snapshot can never write.
            assertInstanceOf(Outcome.Applied.class, inbox.apply("drink-5", Content.of(5), tx -> stock.add(tx, 5)));
            InboxBusyException busy = assertThrows(InboxBusyException.class,
                    () -> inbox.applyIn(reader, "snack-7", Content.of(7), tx -> stock.add(tx, 7)));
            assertTrue(busy.getMessage().contains("SQLITE_BUSY_SNAPSHOT"), busy.getMessage());
            assertTrue(busy.getMessage().contains("BEGIN IMMEDIATE"), busy.getMessage());
            reader.rollback();
        }
        assertEquals(1, rows());
        assertEquals(5, stock.total());
    }

    @Test
    void aConnectionToAnotherFileIsRefusedByName() {
        Jdbi elsewhere = SqliteInbox.jdbi(directory.resolve("elsewhere.db"));
        try (Handle handle = elsewhere.open()) {
            handle.begin();
            InboxException refused = assertThrows(InboxException.class,
                    () -> inbox.applyIn(handle, "snack-7", Content.of(7), tx -> 1));
            assertTrue(refused.getMessage().contains("elsewhere.db"), refused.getMessage());
            assertTrue(refused.getMessage().contains("stock.db"), refused.getMessage());
            handle.rollback();
        }
        assertEquals(0, rows());
    }

    @Test
    void anEffectThatRollsBackThroughJdbiIsRefusedInsteadOfIgnored() {
        // Jdbi ignores rollback() on a handle it began no transaction on: without the guard, the
        // effect's writes would be committed while the effect believed them undone.
        assertThrows(EffectBrokeTransactionException.class, () -> inbox.apply("snack-7", Content.of(7), tx -> {
            stock.add(tx, 7);
            tx.rollback();
            return 1;
        }));
        assertEquals(0, rows());
        assertEquals(0, stock.total());
        assertEquals(0, inbox.stats().applied());
    }

    @Test
    void anEffectThatCommitsWithSqlIsReportedNotApplied() {
        assertThrows(EffectBrokeTransactionException.class, () -> inbox.apply("snack-7", Content.of(7), tx -> {
            stock.add(tx, 7);
            return tx.execute("COMMIT");
        }));
        assertEquals(0, inbox.stats().applied(), "never counted as applied");
        // The effect's COMMIT took the claim with its write: a redelivery is a duplicate.
        assertEquals(1, rows());
        assertEquals(7, stock.total());
        assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-7", Content.of(7), tx -> stock.add(tx, 7)));
    }

    @Test
    void aJoinedCallWithAnOriginTimeBeforeTheHorizonIsRefusedAsStaleInBothForms() throws Exception {
        Instant now = Instant.parse("2026-03-01T00:00:00Z");
        try (SqliteInbox dated = SqliteInbox.builder(directory.resolve("dated.db")).name("dated")
                .clock(Clock.fixed(now, ZoneOffset.UTC)).retention(Duration.ofDays(1)).build()) {
            dated.retention().purge(); // the horizon: a day ago
            Instant twoDaysAgo = now.minus(Duration.ofDays(2));
            try (Handle handle = dated.jdbi().open()) {
                handle.begin();
                assertThrows(StaleMessageException.class,
                        () -> dated.applyIn(handle, "snack-7", Content.of(7), twoDaysAgo, tx -> 1));
                assertInstanceOf(Outcome.Applied.class,
                        dated.applyIn(handle, "snack-8", Content.of(8), now.minusSeconds(60), tx -> 1));
                handle.commit();

                Connection connection = handle.getConnection();
                connection.setAutoCommit(false);
                assertThrows(StaleMessageException.class,
                        () -> dated.applyIn(connection, "snack-9", Content.of(9), twoDaysAgo, tx -> 1));
                connection.rollback();
                connection.setAutoCommit(true);
            }
            assertTrue(dated.find("snack-7").isEmpty());
            assertTrue(dated.find("snack-8").isPresent());
            assertTrue(dated.find("snack-9").isEmpty());
            assertEquals(2, dated.stats().stale());
        }
    }
}
