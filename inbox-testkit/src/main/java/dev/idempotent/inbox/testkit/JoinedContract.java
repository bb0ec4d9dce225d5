package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.quicktheories.core.Gen;

/**
 * The contract of joined calls ({@link JdbiInbox#applyIn}) every Jdbi adapter passes against a
 * real database, through a Jdbi {@link Handle} and through a plain JDBC {@link Connection}: the
 * seed table, counting only after the caller's commit, the caller's rollback, an effect that
 * throws, concurrent claims of one id, bad input, the misuses the inbox refuses by name, two
 * inboxes in one transaction, and a property with random rollbacks by the caller. Every caller
 * transaction also writes a row of its own ({@code joined_log}), which must commit or roll back
 * with the claim. Subclass it in the adapter's tests and implement {@link #openFixture()}.
 */
public abstract class JoinedContract {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");

    /** How the caller holds its transaction. */
    public enum Form {
        /** A Jdbi handle after {@code begin()}; the outcome is counted through Jdbi's commit callback. */
        HANDLE,
        /** A JDBC connection with autocommit off; the caller reports its commit on the pending outcome. */
        CONNECTION
    }

    /** The fixture of the running test, for subclasses' own scenarios. */
    protected InboxFixture fixture;
    private final List<JdbiInbox> opened = new ArrayList<>();
    private final AtomicInteger effects = new AtomicInteger();
    private Stock stock;

    /**
     * A fixture over a fresh, real database; closed after each test.
     *
     * @return the fixture
     * @throws Exception if the database cannot be prepared; the test fails
     */
    protected abstract InboxFixture openFixture() throws Exception;

    @BeforeEach
    void openDatabase() throws Exception {
        fixture = openFixture();
        stock = Stock.create(fixture.jdbi(), "warehouse");
        fixture.jdbi().useHandle(handle -> handle.execute(
                "CREATE TABLE IF NOT EXISTS joined_log (entry VARCHAR(100) PRIMARY KEY, qty BIGINT NOT NULL)"));
    }

    @AfterEach
    void closeDatabase() {
        opened.forEach(JdbiInbox::close);
        fixture.close();
    }

    /**
     * An inbox that is closed after the test, with a fixed clock.
     *
     * @param name the inbox's name
     * @return the open inbox
     */
    protected JdbiInbox inbox(String name) {
        JdbiInbox inbox = fixture.builder().name(name).clock(Clock.fixed(T0, ZoneOffset.UTC)).build();
        opened.add(inbox);
        return inbox;
    }

    /** The business change of one receipt, counting how often it really ran. */
    private Effect<Handle, Integer, RuntimeException> receipt(long qty) {
        return tx -> {
            effects.incrementAndGet();
            return stock.add(tx, qty);
        };
    }

    /**
     * What a caller does inside its transaction, given a way to apply joined: its own write, then
     * any number of joined calls.
     */
    @FunctionalInterface
    private interface CallerWork {
        List<PendingOutcome<Integer>> run(Joiner joiner) throws Exception;
    }

    /** Applies joined in the caller's open transaction, in one form. */
    private interface Joiner {
        PendingOutcome<Integer> apply(JdbiInbox inbox, String id, Content content,
                Effect<Handle, Integer, RuntimeException> effect);

        void log(String entry, long qty) throws SQLException;
    }

    /**
     * Runs one caller transaction in {@code form}: {@code work}, then a commit (or a rollback when
     * {@code rollback} is set), then reports it to the outcomes as a caller of that form does.
     *
     * @return the final outcomes; after a rollback, the uncommitted ones
     */
    private List<Outcome<Integer>> transaction(JdbiInbox caller, Form form, boolean rollback, CallerWork work)
            throws Exception {
        List<Outcome<Integer>> outcomes = new ArrayList<>();
        if (form == Form.HANDLE) {
            // The inbox's own Jdbi, as a service that shares it would use.
            try (Handle handle = caller.jdbi().open()) {
                handle.begin();
                List<PendingOutcome<Integer>> pending;
                try {
                    pending = work.run(new Joiner() {
                        @Override
                        public PendingOutcome<Integer> apply(JdbiInbox inbox, String id, Content content,
                                Effect<Handle, Integer, RuntimeException> effect) {
                            Outcome<Integer> outcome = inbox.applyIn(handle, id, content, effect);
                            return new Uncounted(outcome);
                        }

                        @Override
                        public void log(String entry, long qty) {
                            handle.execute("INSERT INTO joined_log (entry, qty) VALUES (?, ?)", entry, qty);
                        }
                    });
                } catch (Exception | Error e) {
                    handle.rollback();
                    throw e;
                }
                if (rollback) {
                    handle.rollback();
                } else {
                    handle.commit();
                }
                pending.forEach(p -> outcomes.add(p.uncommitted()));
            }
            return outcomes;
        }
        try (Handle own = fixture.jdbi().open()) {
            Connection connection = own.getConnection();
            connection.setAutoCommit(false);
            try {
                List<PendingOutcome<Integer>> pending;
                try {
                    pending = work.run(new Joiner() {
                        @Override
                        public PendingOutcome<Integer> apply(JdbiInbox inbox, String id, Content content,
                                Effect<Handle, Integer, RuntimeException> effect) {
                            return inbox.applyIn(connection, id, content, effect);
                        }

                        @Override
                        public void log(String entry, long qty) throws SQLException {
                            try (var insert = connection.prepareStatement(
                                    "INSERT INTO joined_log (entry, qty) VALUES (?, ?)")) {
                                insert.setString(1, entry);
                                insert.setLong(2, qty);
                                insert.executeUpdate();
                            }
                        }
                    });
                } catch (Exception | Error e) {
                    connection.rollback();
                    throw e;
                }
                if (rollback) {
                    connection.rollback();
                    pending.forEach(PendingOutcome::rolledBack);
                    pending.forEach(p -> outcomes.add(p.uncommitted()));
                } else {
                    connection.commit();
                    for (PendingOutcome<Integer> p : pending) {
                        outcomes.add(committedOrNull(p));
                    }
                }
            } finally {
                connection.setAutoCommit(true);
            }
        }
        return outcomes;
    }

    /**
     * The final outcome of {@code pending} after the caller's commit, or {@code null} when the inbox
     * knows it never became final (rolled back with an enclosing joined call, or with the whole
     * transaction), which it says by refusing {@code committed()}.
     */
    private static Outcome<Integer> committedOrNull(PendingOutcome<Integer> pending) {
        try {
            return pending.committed();
        } catch (IllegalStateException undone) {
            return null;
        }
    }

    /** A Handle-form outcome, which Jdbi's callbacks count; the test reads it only. */
    private record Uncounted(Outcome<Integer> outcome) implements PendingOutcome<Integer> {
        @Override
        public String id() {
            return outcome.id();
        }

        @Override
        public Outcome<Integer> uncommitted() {
            return outcome;
        }

        @Override
        public Outcome<Integer> committed() {
            return outcome;
        }

        @Override
        public void rolledBack() {}
    }

    /** One caller transaction that logs {@code entry} and applies one receipt, then commits. */
    private Outcome<Integer> receive(JdbiInbox inbox, Form form, String id, long qty) throws Exception {
        return transaction(inbox, form, false, joiner -> {
            joiner.log(id + "@" + effects.get() + "#" + System.nanoTime(), qty);
            return List.of(joiner.apply(inbox, id, Content.of(qty), receipt(qty)));
        }).get(0);
    }

    private long rows(JdbiInbox inbox) {
        return Stock.inboxRows(fixture, inbox.name());
    }

    private long logRows() {
        return fixture.jdbi().withHandle(h -> h.createQuery("SELECT COUNT(*) FROM joined_log").mapTo(Long.class).one());
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void seedTableJoined(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");

        assertInstanceOf(Outcome.Applied.class, receive(inbox, form, "snack-7", 7));
        assertEquals(7, stock.total());
        assertEquals(1, rows(inbox));
        assertEquals(1, logRows(), "the caller's own write committed with the claim");

        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, form, "snack-7", 7));
        Outcome<Integer> conflict = receive(inbox, form, "snack-7", 8);
        assertInstanceOf(Outcome.Conflict.class, conflict);
        assertFalse(conflict.isAccepted());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, form, "drink-5", 5));

        assertEquals(12, stock.total());
        assertEquals(2, rows(inbox));
        assertEquals(2, effects.get());
        assertEquals(4, logRows(), "each caller transaction committed its own write, whatever the outcome");
        assertEquals(List.of(2L, 1L, 1L, 4L), List.of(inbox.stats().applied(), inbox.stats().duplicates(),
                inbox.stats().conflicts(), inbox.stats().attempts()));
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void appliedIsCountedOnlyAfterTheCallersCommit(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        RecordingCounts before = new RecordingCounts();
        transaction(inbox, form, false, joiner -> {
            PendingOutcome<Integer> pending = joiner.apply(inbox, "snack-7", Content.of(7), receipt(7));
            assertInstanceOf(Outcome.Applied.class, pending.uncommitted());
            before.applied = inbox.stats().applied();
            before.attempts = inbox.stats().attempts();
            before.committedRows = rows(inbox);
            return List.of(pending);
        });
        assertEquals(0, before.applied, "not counted before the caller's commit");
        assertEquals(0, before.attempts);
        assertEquals(0, before.committedRows, "other connections see nothing before the caller's commit");
        assertEquals(1, inbox.stats().applied(), "counted once after it");
        assertEquals(1, rows(inbox));
    }

    /** What the test saw inside the caller's transaction. */
    private static final class RecordingCounts {
        long applied;
        long attempts;
        long committedRows;
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void callersRollbackLeavesNothingAndARetryApplies(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        List<Outcome<Integer>> rolledBack = transaction(inbox, form, true, joiner -> {
            joiner.log("rolled-back", 7);
            return List.of(joiner.apply(inbox, "snack-7", Content.of(7), receipt(7)));
        });
        assertInstanceOf(Outcome.Applied.class, rolledBack.get(0), "applied, had the caller committed");
        assertEquals(0, rows(inbox));
        assertEquals(0, stock.total());
        assertEquals(0, logRows());
        assertEquals(0, inbox.stats().applied(), "a rolled-back joined call is never counted");
        assertEquals(0, inbox.stats().attempts());

        assertInstanceOf(Outcome.Applied.class, receive(inbox, form, "snack-7", 7), "the redelivery applies");
        assertEquals(7, stock.total());
        assertEquals(1, inbox.stats().applied());
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void aThrowingEffectLeavesNeitherClaimNorWritesAndTheCallersTransactionGoesOn(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        IllegalStateException thrown = new IllegalStateException("printer on fire");
        transaction(inbox, form, false, joiner -> {
            joiner.log("before", 1);
            IllegalStateException seen = assertThrows(IllegalStateException.class,
                    () -> joiner.apply(inbox, "snack-7", Content.of(7), tx -> {
                        stock.add(tx, 7);
                        throw thrown;
                    }));
            assertSame(thrown, seen, "the effect's exception reaches the caller unchanged");
            joiner.log("after", 2);
            return List.of();
        });
        assertEquals(0, rows(inbox), "no claim");
        assertEquals(0, stock.total(), "none of the effect's writes");
        assertEquals(2, logRows(), "the caller's writes before and after the failed call committed");
        assertEquals(1, inbox.stats().failed());

        assertInstanceOf(Outcome.Applied.class, receive(inbox, form, "snack-7", 7), "the retry applies");
        assertEquals(7, stock.total());
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void badInputIsRefusedAndChangesNothing(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        transaction(inbox, form, false, joiner -> {
            joiner.log("kept", 1);
            for (String id : new String[] {null, "", "  ", "x".repeat(256), "tab\tid"}) {
                assertThrows(InvalidMessageException.class,
                        () -> joiner.apply(inbox, id, Content.of(7), receipt(7)), "id " + id);
            }
            assertThrows(NullPointerException.class, () -> joiner.apply(inbox, "snack-7", Content.of(7), null));
            return List.of();
        });
        assertEquals(0, rows(inbox));
        assertEquals(0, effects.get());
        assertEquals(1, logRows(), "the caller's transaction stayed usable");
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void concurrentJoinedClaimsOfOneIdApplyOnce(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        int threads = 8;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<Object>> results = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                long qty = t % 2 == 0 ? 7 : 8;
                Callable<Object> call = () -> {
                    start.await(30, TimeUnit.SECONDS);
                    try {
                        return receive(inbox, form, "snack", qty);
                    } catch (InboxException e) {
                        return e;
                    }
                };
                results.add(pool.submit(call));
            }
            int applied = 0;
            for (Future<Object> result : results) {
                Object outcome = result.get(60, TimeUnit.SECONDS);
                if (outcome instanceof Outcome.Applied<?>) {
                    applied++;
                } else if (outcome instanceof InboxException failure) {
                    assertEquals(FailureKind.RETRYABLE, FailureKind.of(failure), "only retryable failures: " + failure);
                } else {
                    assertTrue(outcome instanceof Outcome.Duplicate<?> || outcome instanceof Outcome.Conflict<?>,
                            "another call is Duplicate or Conflict: " + outcome);
                }
            }
            assertEquals(1, applied, "exactly one call applied");
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, effects.get(), "one effect committed");
        assertEquals(1, rows(inbox));
        long total = stock.total();
        assertTrue(total == 7 || total == 8, "the total is the one applied quantity: " + total);
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void twoInboxesInOneTransactionCommitAndRollBackTogether(Form form) throws Exception {
        JdbiInbox orders = inbox("orders");
        JdbiInbox payments = inbox("payments");
        CallerWork both = joiner -> {
            joiner.log("order-and-payment", 7);
            return List.of(joiner.apply(orders, "o-1", Content.of(7), receipt(7)),
                    joiner.apply(payments, "o-1", Content.of(7), receipt(7)));
        };
        transaction(orders, form, true, both);
        assertEquals(List.of(0L, 0L, 0L), List.of(rows(orders), rows(payments), stock.total()));

        List<Outcome<Integer>> outcomes = transaction(orders, form, false, both);
        outcomes.forEach(outcome -> assertInstanceOf(Outcome.Applied.class, outcome));
        assertEquals(List.of(1L, 1L, 14L), List.of(rows(orders), rows(payments), stock.total()));
        assertEquals(List.of(1L, 1L), List.of(orders.stats().applied(), payments.stats().applied()));
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void noTransactionOpenIsRefusedByName(Form form) {
        JdbiInbox inbox = inbox("warehouse");
        InboxException refused;
        if (form == Form.HANDLE) {
            try (Handle handle = inbox.jdbi().open()) {
                refused = assertThrows(InboxException.class,
                        () -> inbox.applyIn(handle, "snack-7", Content.of(7), receipt(7)));
            }
        } else {
            try (Handle own = fixture.jdbi().open()) {
                refused = assertThrows(InboxException.class,
                        () -> inbox.applyIn(own.getConnection(), "snack-7", Content.of(7), receipt(7)));
            }
        }
        assertTrue(refused.getMessage().contains(form == Form.HANDLE ? "no transaction open" : "autocommit"),
                refused.getMessage());
        assertEquals(0, rows(inbox));
        assertEquals(0, effects.get());
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void anEffectThatCommitsThroughJdbiIsRefusedAndNothingIsRecorded(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        transaction(inbox, form, false, joiner -> {
            joiner.log("kept", 1);
            assertThrows(EffectBrokeTransactionException.class,
                    () -> joiner.apply(inbox, "snack-7", Content.of(7), tx -> {
                        stock.add(tx, 7);
                        tx.commit();
                        return 1;
                    }));
            return List.of();
        });
        assertEquals(0, rows(inbox));
        assertEquals(0, stock.total());
        assertEquals(1, logRows(), "the caller's transaction went on and committed its own write");
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void anEffectThatCatchesTheRefusalIsStillReported(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        transaction(inbox, form, false, joiner -> {
            assertThrows(EffectBrokeTransactionException.class,
                    () -> joiner.apply(inbox, "snack-7", Content.of(7), tx -> {
                        stock.add(tx, 7);
                        try {
                            tx.rollback();
                        } catch (EffectBrokeTransactionException swallowed) {
                            // A careless effect goes on.
                        }
                        return 1;
                    }));
            return List.of();
        });
        assertEquals(0, rows(inbox));
        assertEquals(0, stock.total());
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void anEffectThatRollsBackTheConnectionIsReportedAndNothingIsRecorded(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        transaction(inbox, form, false, joiner -> {
            joiner.log("rolled back by the effect", 1);
            EffectBrokeTransactionException broken = assertThrows(EffectBrokeTransactionException.class,
                    () -> joiner.apply(inbox, "snack-7", Content.of(7), tx -> {
                        stock.add(tx, 7);
                        onConnection(tx, Connection::rollback);
                        return 1;
                    }));
            assertTrue(broken.getMessage().contains("must not end the transaction"), broken.getMessage());
            return List.of();
        });
        assertEquals(0, rows(inbox));
        assertEquals(0, stock.total());
        assertEquals(0, logRows(), "the effect's rollback took the caller's earlier write too");
        assertEquals(0, inbox.stats().applied());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, form, "snack-7", 7), "the redelivery applies");
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void anEffectThatCommitsTheConnectionIsReportedNeverApplied(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        transaction(inbox, form, false, joiner -> {
            assertThrows(EffectBrokeTransactionException.class,
                    () -> joiner.apply(inbox, "snack-7", Content.of(7), tx -> {
                        stock.add(tx, 7);
                        onConnection(tx, Connection::commit);
                        return 1;
                    }));
            return List.of();
        });
        // The effect's own commit took the claim along: claim and effect stay together, and the
        // redelivery is a duplicate, not a second effect.
        assertEquals(1, rows(inbox), "the effect's commit took the claim along");
        assertEquals(7, stock.total(), "and its write with it");
        assertEquals(0, inbox.stats().applied(), "never counted as applied");
        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, form, "snack-7", 7));
        assertEquals(7, stock.total(), "applied exactly once");
    }

    @ParameterizedTest
    @EnumSource(Form.class)
    void applyReenteredFromAJoinedEffectIsRefusedAtOnce(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        transaction(inbox, form, false, joiner -> {
            assertThrows(InboxException.class, () -> joiner.apply(inbox, "outer", Content.of(1), tx -> {
                InboxException inner = assertThrows(InboxException.class,
                        () -> inbox.apply("inner", Content.of(2), receipt(2)));
                assertEquals(FailureKind.PERMANENT, FailureKind.of(inner), "a misuse, not a busy database: " + inner);
                throw inner;
            }));
            return List.of();
        });
        assertEquals(0, rows(inbox));
        assertEquals(0, stock.total());
    }

    /**
     * An outer joined call whose effect applies a message of a second inbox on the same
     * transaction and then throws, the caller catching it and committing: nothing of either call
     * remains, the nested one is not counted, and a redelivery to either applies.
     */
    @ParameterizedTest
    @EnumSource(Form.class)
    void aFailedJoinedCallTakesTheCallNestedInItsEffectWithIt(Form form) throws Exception {
        JdbiInbox orders = inbox("orders");
        JdbiInbox payments = inbox("payments");
        IllegalStateException fails = new IllegalStateException("order refused after its payment");
        List<PendingOutcome<Integer>> nested = new ArrayList<>();
        transaction(orders, form, false, joiner -> {
            joiner.log("before", 1);
            assertSame(fails, assertThrows(IllegalStateException.class,
                    () -> joiner.apply(orders, "o-1", Content.of(1), tx -> {
                        stock.add(tx, 1);
                        nested.add(joiner.apply(payments, "o-1", Content.of(10), tx2 -> stock.add(tx2, 10)));
                        throw fails;
                    })));
            joiner.log("after", 2);
            return List.of();
        });
        assertEquals(List.of(0L, 0L, 0L), List.of(rows(orders), rows(payments), stock.total()),
                "neither claim nor write of the failed call or of the call nested in it");
        assertEquals(2, logRows(), "the caller's own writes committed");
        assertEquals(List.of(0L, 0L), List.of(orders.stats().applied(), payments.stats().applied()),
                "the nested call went with its enclosing call's savepoint, so it is not counted");
        if (form == Form.CONNECTION) {
            assertThrows(IllegalStateException.class, nested.get(0)::committed,
                    "the nested call's outcome never became final");
        }
        assertInstanceOf(Outcome.Applied.class, receive(orders, form, "o-1", 1));
        assertInstanceOf(Outcome.Applied.class, receive(payments, form, "o-1", 10));
        assertEquals(11, stock.total());
    }

    /**
     * Three inboxes nested in one caller transaction, each effect applying the next: first the
     * innermost fails and the middle one catches it, then, in a second transaction, the middle one
     * fails after the innermost succeeded and the outermost catches it. Nothing of a failed call
     * remains, calls nested in it included; everything else commits; the counts are what committed.
     */
    @ParameterizedTest
    @EnumSource(Form.class)
    void nestedJoinedCallsThreeDeepKeepExactlyWhatDidNotFail(Form form) throws Exception {
        JdbiInbox outer = inbox("outer");
        JdbiInbox middle = inbox("middle");
        JdbiInbox inner = inbox("inner");
        IllegalStateException innerFails = new IllegalStateException("inner fails");
        List<Outcome<Integer>> first = transaction(outer, form, false, joiner -> {
            joiner.log("first", 1);
            List<PendingOutcome<Integer>> done = new ArrayList<>();
            done.add(joiner.apply(outer, "m-1", Content.of(1), tx -> {
                stock.add(tx, 1);
                done.add(joiner.apply(middle, "m-1", Content.of(10), tx2 -> {
                    stock.add(tx2, 10);
                    assertSame(innerFails, assertThrows(IllegalStateException.class,
                            () -> joiner.apply(inner, "m-1", Content.of(100), tx3 -> {
                                stock.add(tx3, 100);
                                throw innerFails;
                            })));
                    return 10;
                }));
                return 1;
            }));
            return done;
        });
        first.forEach(outcome -> assertInstanceOf(Outcome.Applied.class, outcome));
        assertEquals(List.of(1L, 1L, 0L, 11L), List.of(rows(outer), rows(middle), rows(inner), stock.total()));
        assertEquals(1, logRows());

        IllegalStateException middleFails = new IllegalStateException("middle fails");
        List<PendingOutcome<Integer>> undone = new ArrayList<>();
        List<Outcome<Integer>> second = transaction(outer, form, false, joiner -> {
            joiner.log("second", 2);
            return List.of(joiner.apply(outer, "m-2", Content.of(1), tx -> {
                stock.add(tx, 1);
                assertSame(middleFails, assertThrows(IllegalStateException.class,
                        () -> joiner.apply(middle, "m-2", Content.of(10), tx2 -> {
                            stock.add(tx2, 10);
                            undone.add(joiner.apply(inner, "m-2", Content.of(100), tx3 -> stock.add(tx3, 100)));
                            throw middleFails;
                        })));
                return 1;
            }));
        });
        assertInstanceOf(Outcome.Applied.class, second.get(0));
        assertEquals(List.of(2L, 1L, 0L, 12L), List.of(rows(outer), rows(middle), rows(inner), stock.total()),
                "the middle call and the innermost one nested in it left nothing");
        assertEquals(2, logRows());
        assertEquals(List.of(2L, 1L, 0L), List.of(outer.stats().applied(), middle.stats().applied(),
                inner.stats().applied()), "counted exactly what committed");
        assertEquals(List.of(0L, 1L, 1L), List.of(outer.stats().failed(), middle.stats().failed(),
                inner.stats().failed()));
        if (form == Form.CONNECTION) {
            assertThrows(IllegalStateException.class, undone.get(0)::committed);
            assertEquals(0, inner.stats().applied(), "and a report of the undone call counts nothing");
        }

        assertInstanceOf(Outcome.Applied.class, receive(inner, form, "m-1", 100), "the failed calls apply again");
        assertInstanceOf(Outcome.Applied.class, receive(inner, form, "m-2", 100));
        assertInstanceOf(Outcome.Applied.class, receive(middle, form, "m-2", 10));
        assertInstanceOf(Outcome.Duplicate.class, receive(outer, form, "m-1", 1));
        assertEquals(222, stock.total());
    }

    /**
     * A call on a JDBC connection whose effect applies a message of a second inbox through the
     * handle it was given: the nested outcome is reported with the outer one, since nobody commits
     * that handle through Jdbi; counted when the outer outcome is, undone when the outer call fails.
     */
    @Test
    void aCallNestedThroughTheEffectsHandleReportsWithTheConnectionCallAroundIt() throws Exception {
        JdbiInbox orders = inbox("orders");
        JdbiInbox payments = inbox("payments");
        IllegalStateException fails = new IllegalStateException("order refused after its payment");
        try (Handle own = fixture.jdbi().open()) {
            Connection connection = own.getConnection();
            connection.setAutoCommit(false);
            try {
                PendingOutcome<Integer> order = orders.applyIn(connection, "o-1", Content.of(1), tx -> {
                    assertInstanceOf(Outcome.Applied.class,
                            payments.applyIn(tx, "o-1", Content.of(10), t -> stock.add(t, 10)));
                    return stock.add(tx, 1);
                });
                assertSame(fails, assertThrows(IllegalStateException.class,
                        () -> orders.applyIn(connection, "o-2", Content.of(1), tx -> {
                            payments.applyIn(tx, "o-2", Content.of(10), t -> stock.add(t, 10));
                            throw fails;
                        })));
                connection.commit();
                assertInstanceOf(Outcome.Applied.class, order.committed());
            } finally {
                connection.setAutoCommit(true);
            }
        }
        assertEquals(List.of(1L, 1L, 11L), List.of(rows(orders), rows(payments), stock.total()));
        assertEquals(List.of(1L, 1L), List.of(orders.stats().applied(), payments.stats().applied()),
                "the nested call counted with the outer one, the failed one's nested call not at all");
    }

    /**
     * An effect that rolls back the raw connection and then writes on: refused, whatever database,
     * so the call is never reported applied with its claim gone.
     */
    @ParameterizedTest
    @EnumSource(Form.class)
    void anEffectThatRollsBackTheConnectionAndWritesOnIsRefused(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        transaction(inbox, form, true, joiner -> {
            joiner.log("rolled back by the effect", 100);
            assertThrows(EffectBrokeTransactionException.class,
                    () -> joiner.apply(inbox, "snack-7", Content.of(7), tx -> {
                        stock.add(tx, 7);
                        onConnection(tx, Connection::rollback);
                        return stock.add(tx, 7);
                    }));
            return List.of();
        });
        assertEquals(List.of(0L, 0L, 0L), List.of(rows(inbox), stock.total(), logRows()));
        assertEquals(0, inbox.stats().applied());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, form, "snack-7", 7), "the redelivery applies");
        assertEquals(7, stock.total());
    }

    /**
     * An effect that commits the raw connection and then writes on, in a transaction the caller
     * then rolls back: refused, never counted; the claim stays with what was committed with it, so
     * the redelivery is a duplicate.
     */
    @ParameterizedTest
    @EnumSource(Form.class)
    void anEffectThatCommitsTheConnectionAndWritesOnIsRefused(Form form) throws Exception {
        JdbiInbox inbox = inbox("warehouse");
        transaction(inbox, form, true, joiner -> {
            assertThrows(EffectBrokeTransactionException.class,
                    () -> joiner.apply(inbox, "snack-7", Content.of(7), tx -> {
                        stock.add(tx, 7);
                        onConnection(tx, Connection::commit);
                        return stock.add(tx, 5);
                    }));
            return List.of();
        });
        assertEquals(1, rows(inbox), "the effect's commit took the claim along");
        assertEquals(7, stock.total(), "with what the effect wrote before it, and nothing after");
        assertEquals(0, inbox.stats().applied());
        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, form, "snack-7", 7));
        assertEquals(7, stock.total());
    }

    /**
     * Whether two caller transactions can hold claims at once, so that their claims can deadlock;
     * false where writers queue for one lock (SQLite).
     *
     * @return true by default
     */
    protected boolean claimsCanDeadlock() {
        return true;
    }

    /**
     * Two caller transactions that each claim an id and then the other's: one claim loses a
     * deadlock (or its lock wait), and the caller goes on in its transaction. Whatever the
     * database did to that transaction, what is counted is what committed, and each committed
     * claim committed with its effect.
     */
    @ParameterizedTest
    @EnumSource(Form.class)
    void aDeadlockBetweenJoinedClaimsCountsOnlyWhatCommitted(Form form) throws Exception {
        assumeTrue(claimsCanDeadlock(), "writers queue for one lock here");
        JdbiInbox inbox = inbox("warehouse");
        CyclicBarrier bothClaimed = new CyclicBarrier(2);
        List<InboxException> failures = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<List<Outcome<Integer>>>> callers = new ArrayList<>();
            for (List<String> ids : List.of(List.of("one", "two"), List.of("two", "one"))) {
                callers.add(pool.submit(() -> transaction(inbox, form, false, joiner -> {
                    List<PendingOutcome<Integer>> done = new ArrayList<>();
                    done.add(joiner.apply(inbox, ids.get(0), Content.of(7), logged(ids.get(0))));
                    bothClaimed.await(30, TimeUnit.SECONDS);
                    for (String id : List.of(ids.get(1), "after-" + ids.get(0))) {
                        try {
                            done.add(joiner.apply(inbox, id, Content.of(7), logged(id)));
                        } catch (InboxException e) {
                            failures.add(e);
                        }
                    }
                    return done;
                })));
            }
            for (Future<List<Outcome<Integer>>> caller : callers) {
                caller.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertFalse(failures.isEmpty(), "one of the crossing claims failed");
        for (InboxException failure : failures) {
            assertEquals(FailureKind.RETRYABLE, FailureKind.of(failure), failure.toString());
        }
        assertEquals(rows(inbox), inbox.stats().applied(), "counted exactly what committed");
        assertEquals(rows(inbox), logRows(), "each committed claim with its effect");
    }

    /** An effect that writes a row of its own, so that effects of different ids never wait for each other. */
    private static Effect<Handle, Integer, RuntimeException> logged(String id) {
        return tx -> tx.execute("INSERT INTO joined_log (entry, qty) VALUES (?, ?)", id, 7);
    }

    /**
     * Sets {@code connection} to REPEATABLE READ for the next transaction; a no-op where the
     * database has no such level and a transaction sees the latest data when it writes (SQLite).
     *
     * @param connection the caller's connection
     * @throws SQLException if the level cannot be set
     */
    protected void repeatableRead(Connection connection) throws SQLException {
        connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    }

    /**
     * A caller transaction at REPEATABLE READ that took its snapshot before a purge committed:
     * the resend of a purged id with its old origin time is refused (stale, or retryable), never
     * applied again from the snapshot's view of the horizon.
     */
    @ParameterizedTest
    @EnumSource(Form.class)
    void aResendOfAPurgedIdIsNotAppliedFromASnapshotOlderThanThePurge(Form form) throws Exception {
        MutableClock clock = new MutableClock(T0);
        JdbiInbox inbox = fixture.builder().name("warehouse").retention(Duration.ofDays(7)).clock(clock).build();
        opened.add(inbox);
        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), T0, receipt(7)));
        clock.advance(Duration.ofDays(8));
        try (Handle handle = fixture.jdbi().open()) {
            Connection connection = handle.getConnection();
            int level = connection.getTransactionIsolation();
            repeatableRead(connection);
            handle.begin();
            try {
                handle.createQuery("SELECT COUNT(*) FROM joined_log").mapTo(Long.class).one();
                assertEquals(1, inbox.retention().purge().rowsPurged(), "the purge commits after the snapshot");
                InboxException refused = assertThrows(InboxException.class, () -> {
                    if (form == Form.HANDLE) {
                        inbox.applyIn(handle, "snack-7", Content.of(7), T0, receipt(7));
                    } else {
                        inbox.applyIn(connection, "snack-7", Content.of(7), T0, receipt(7));
                    }
                });
                assertTrue(refused instanceof StaleMessageException
                        || FailureKind.of(refused) == FailureKind.RETRYABLE, refused.toString());
            } finally {
                handle.rollback();
                connection.setTransactionIsolation(level);
            }
        }
        assertEquals(7, stock.total(), "applied once");
        assertEquals(0, rows(inbox));
        assertEquals(1, effects.get());
    }

    /** An action on the raw connection behind {@code tx}, as an effect that goes past Jdbi does. */
    private static void onConnection(Handle tx, SqlAction action) {
        try {
            action.run(tx.getConnection());
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @FunctionalInterface
    private interface SqlAction {
        void run(Connection connection) throws SQLException;
    }

    /** One caller transaction of the property: a delivery, and whether the caller rolls back. */
    private record Step(String id, long qty, boolean rollback, boolean viaConnection) {}

    private static Gen<List<Step>> steps() {
        Gen<Step> step = Generators.ids().zip(Generators.quantities(), booleans().all(), booleans().all(),
                Step::new);
        return lists().of(step).ofSizeBetween(0, 20);
    }

    /**
     * Random joined deliveries, each in a caller transaction that commits or rolls back at random,
     * through either form: no id of a rolled-back transaction is recorded, a later delivery of it
     * applies, the outcome of each committed delivery is what "first committed content wins"
     * predicts, and the total is the sum of qty over distinct applied ids.
     */
    @Test
    void randomCallerRollbacksKeepTheInvariants() {
        qt().withExamples(25).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(steps())
                .checkAssert(this::runSteps);
    }

    private void runSteps(List<Step> steps) {
        String name = Generators.uniqueName("joined");
        Stock own = Stock.create(fixture.jdbi(), name);
        Map<String, Long> committedFirst = new HashMap<>();
        long committedApplied = 0;
        try (JdbiInbox inbox = fixture.builder().name(name).build()) {
            for (Step step : steps) {
                Form form = step.viaConnection() ? Form.CONNECTION : Form.HANDLE;
                Outcome<Integer> outcome = transaction(inbox, form, step.rollback(), joiner -> List.of(joiner.apply(
                        inbox, step.id(), Content.of(step.qty()), tx -> own.add(tx, step.qty())))).get(0);
                Long first = committedFirst.get(step.id());
                Class<?> expected = first == null ? Outcome.Applied.class
                        : first == step.qty() ? Outcome.Duplicate.class : Outcome.Conflict.class;
                assertEquals(expected, outcome.getClass(), step.toString());
                if (!step.rollback() && first == null) {
                    committedFirst.put(step.id(), step.qty());
                    committedApplied++;
                }
                assertEquals(committedFirst.containsKey(step.id()), inbox.find(step.id()).isPresent(),
                        "recorded exactly when a transaction that applied it committed: " + step);
            }
            assertEquals(committedFirst.values().stream().mapToLong(Long::longValue).sum(), own.total(),
                    "total = sum of qty over distinct applied ids");
            assertEquals(committedFirst.size(), Stock.inboxRows(fixture, name));
            assertEquals(committedApplied, inbox.stats().applied(), "counted only what committed");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
