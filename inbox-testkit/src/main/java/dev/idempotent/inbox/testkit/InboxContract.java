package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.ContentStorage;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.InvalidMessageException.Problem;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.Phase;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The example-based contract every adapter passes, against a real database. Subclass it in the
 * adapter's tests and implement {@link #openFixture()}.
 */
public abstract class InboxContract {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");

    /** The fixture of the running test, for subclasses' own scenarios. */
    protected InboxFixture fixture;
    private final List<Inbox<Handle>> opened = new ArrayList<>();
    private Stock stock;
    private final AtomicInteger effects = new AtomicInteger();

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
    }

    @AfterEach
    void closeDatabase() {
        opened.forEach(Inbox::close);
        fixture.close();
    }

    /** {@return an inbox named {@code warehouse} with a fixed clock}, closed after the test. */
    protected Inbox<Handle> inbox() {
        return inbox(fixture.builder().name("warehouse").clock(Clock.fixed(T0, ZoneOffset.UTC)));
    }

    /**
     * Builds an inbox that is closed after the test.
     *
     * @param builder a builder from {@link #fixture}
     * @return the open inbox
     */
    protected Inbox<Handle> inbox(dev.idempotent.inbox.InboxBuilder<? extends Inbox<Handle>> builder) {
        Inbox<Handle> inbox = builder.build();
        opened.add(inbox);
        return inbox;
    }

    /** The seed's receive: add qty to the total, counting how often the effect really ran. */
    private Outcome<Integer> receive(Inbox<Handle> inbox, String id, long qty) {
        return inbox.apply(id, Content.of(qty), tx -> {
            effects.incrementAndGet();
            return stock.add(tx, qty);
        });
    }

    private long rows(Inbox<Handle> inbox) {
        return Stock.inboxRows(fixture, inbox.name());
    }

    /** Compares the counters one by one, and checks that attempts is their sum. */
    private static void assertStats(
            Inbox<Handle> inbox, long applied, long duplicates, long conflicts, long invalid, long busy, long failed) {
        InboxStats stats = inbox.stats();
        assertEquals(List.of(applied, duplicates, conflicts, invalid, busy, failed),
                List.of(stats.applied(), stats.duplicates(), stats.conflicts(), stats.invalid(), stats.busy(),
                        stats.failed()),
                "applied, duplicates, conflicts, invalid, busy, failed");
        assertEquals(applied + duplicates + conflicts + invalid + busy + failed, stats.attempts());
    }

    @Test
    void seedTableRowByRow() {
        Inbox<Handle> inbox = inbox();

        Outcome<Integer> first = receive(inbox, "snack-7", 7);
        assertInstanceOf(Outcome.Applied.class, first);
        assertTrue(first.isNewlyApplied());
        assertTrue(first.isAccepted());
        assertEquals(1, rows(inbox));
        assertEquals(7, stock.total());

        Outcome<Integer> again = receive(inbox, "snack-7", 7);
        assertInstanceOf(Outcome.Duplicate.class, again);
        assertFalse(again.isNewlyApplied());
        assertTrue(again.isAccepted(), "a duplicate is success: it must be acknowledged");
        assertEquals(1, rows(inbox));
        assertEquals(7, stock.total());

        Outcome<Integer> changed = receive(inbox, "snack-7", 8);
        assertInstanceOf(Outcome.Conflict.class, changed);
        assertFalse(changed.isNewlyApplied());
        assertFalse(changed.isAccepted(), "a conflict must not be acknowledged as success");
        assertEquals(1, rows(inbox));
        assertEquals(7, stock.total(), "the earlier business is kept");

        Outcome<Integer> other = receive(inbox, "snack-8", 7);
        assertInstanceOf(Outcome.Applied.class, other);
        assertTrue(other.isNewlyApplied());
        assertEquals(2, rows(inbox), "equal content under another id is a separate business");
        assertEquals(14, stock.total());

        assertEquals(2, effects.get());
        assertStats(inbox, 2, 1, 1, 0, 0, 0);
        assertEquals(4, inbox.stats().attempts());
    }

    @Test
    void appliedCarriesTheEffectResultAndReceiveTime() {
        Outcome<Integer> outcome = receive(inbox(), "snack-7", 7);
        Outcome.Applied<Integer> applied = assertInstanceOf(Outcome.Applied.class, outcome);
        assertEquals(1, applied.result(), "the effect's result: one stock row updated");
        assertEquals(T0, applied.receivedAt());
    }

    @Test
    void duplicateCarriesFirstReceiveTimeAndDoesNotRunEffect() {
        Instant later = T0.plus(Duration.ofHours(3));
        receive(inbox(), "snack-7", 7);
        Inbox<Handle> afterwards =
                inbox(fixture.builder().name("warehouse").clock(Clock.fixed(later, ZoneOffset.UTC)));

        Outcome<Integer> outcome = receive(afterwards, "snack-7", 7);

        Outcome.Duplicate<Integer> duplicate = assertInstanceOf(Outcome.Duplicate.class, outcome);
        assertEquals(T0, duplicate.firstReceivedAt());
        assertEquals(Content.of(7).fingerprint(), duplicate.fingerprint());
        assertEquals(1, effects.get());
    }

    @Test
    void conflictCarriesBothFingerprintsAndKeepsEarlierBusiness() {
        Inbox<Handle> inbox = inbox();
        receive(inbox, "snack-7", 7);

        Outcome<Integer> outcome = receive(inbox, "snack-7", 8);

        Outcome.Conflict<Integer> conflict = assertInstanceOf(Outcome.Conflict.class, outcome);
        assertEquals(Content.of(7).fingerprint(), conflict.stored());
        assertEquals(Content.of(8).fingerprint(), conflict.offered());
        assertEquals(T0, conflict.firstReceivedAt());
        assertFalse(conflict.contentTypeChanged());
        assertEquals(7, stock.total());
        assertEquals(Content.of(7).fingerprint(), inbox.find("snack-7").orElseThrow().fingerprint());
    }

    @Test
    void sameBytesUnderAnotherContentTypeIsAConflictThatSaysSo() {
        Inbox<Handle> inbox = inbox();
        inbox.apply("order-1", Content.structured("order", 1, new byte[] {1, 2}), tx -> null);

        Outcome<Object> outcome = inbox.apply("order-1", Content.structured("order", 2, new byte[] {1, 2}), tx -> null);

        Outcome.Conflict<Object> conflict = assertInstanceOf(Outcome.Conflict.class, outcome);
        assertTrue(conflict.contentTypeChanged());
    }

    @Test
    void uncheckedEffectFailureArrivesUnchangedAndRecordsNothing() {
        Inbox<Handle> inbox = inbox();
        IllegalStateException thrown = new IllegalStateException("shelf is full");

        IllegalStateException caught = assertThrows(IllegalStateException.class, () -> inbox.apply(
                "snack-7", Content.of(7), tx -> {
                    stock.add(tx, 7);
                    throw thrown;
                }));

        assertSame(thrown, caught);
        assertEquals(0, stock.total(), "the effect's own write was rolled back");
        assertEquals(0, rows(inbox));
        assertTrue(inbox.find("snack-7").isEmpty());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7), "a retry applies");
        assertEquals(7, stock.total());
        assertStats(inbox, 1, 0, 0, 0, 0, 1);
    }

    @Test
    void checkedEffectFailureArrivesUnchangedAndRecordsNothing() {
        Inbox<Handle> inbox = inbox();
        IOException thrown = new IOException("printer offline");

        IOException caught = assertThrows(IOException.class, () -> inbox.apply(
                "snack-7", Content.of(7), tx -> {
                    stock.add(tx, 7);
                    throw thrown;
                }));

        assertSame(thrown, caught);
        assertEquals(0, stock.total());
        assertEquals(0, rows(inbox));
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7));
    }

    /** A business table with a unique key, holding {@code taken}, so that inserting it again fails. */
    private void createAuditTableHolding(String taken) {
        fixture.jdbi().useHandle(db -> {
            db.execute("CREATE TABLE audit_entry (id VARCHAR(100) PRIMARY KEY)");
            db.execute("INSERT INTO audit_entry (id) VALUES (?)", taken);
        });
    }

    /** The seed's effect plus a best-effort audit insert whose failure the effect catches and ignores. */
    private int addSwallowingAFailedInsert(Handle tx, long qty, String taken) {
        int updated = stock.add(tx, qty);
        try {
            tx.execute("INSERT INTO audit_entry (id) VALUES (?)", taken);
        } catch (JdbiException swallowed) {
            // What a best-effort audit write does; the transaction's fate is then the database's.
        }
        return updated;
    }

    @Test
    void effectThatSwallowsAFailedStatementIsNeverAppliedWithoutItsRecord() {
        Inbox<Handle> inbox = inbox();
        createAuditTableHolding("taken");

        if (fixture.failedStatementAbortsTransaction()) {
            InboxException refused = assertThrows(InboxException.class,
                    () -> inbox.apply("snack-7", Content.of(7), tx -> addSwallowingAFailedInsert(tx, 7, "taken")));
            assertInstanceOf(EffectBrokeTransactionException.class, refused);
            assertInstanceOf(java.sql.SQLException.class, refused.getCause(), "names the swallowed failure");
            assertTrue(inbox.find("snack-7").isEmpty(), "nothing recorded");
            assertEquals(0, stock.total(), "nothing written");
            assertStats(inbox, 0, 0, 0, 0, 0, 1);
            assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7), "a retry applies");
            assertEquals(7, stock.total());
        } else {
            Outcome<Integer> outcome = inbox.apply("snack-7", Content.of(7),
                    tx -> addSwallowingAFailedInsert(tx, 7, "taken"));
            assertInstanceOf(Outcome.Applied.class, outcome);
            assertTrue(inbox.find("snack-7").isPresent(), "Applied, so recorded");
            assertEquals(7, stock.total(), "the effect's other write committed with the record");
            assertStats(inbox, 1, 0, 0, 0, 0, 0);
        }
    }

    @Test
    void effectThatSwallowsAFailedStatementInABatchFailsOnlyItsOwnMessage() {
        Inbox<Handle> inbox = inbox();
        createAuditTableHolding("taken");
        List<Message> batch = List.of(
                Message.of("snack-1", Content.of(1)), Message.of("snack-2", Content.of(2)),
                Message.of("snack-3", Content.of(3)));

        List<MessageResult<Integer>> results = inbox.applyAll(batch, (tx, message) -> message.id().equals("snack-2")
                ? addSwallowingAFailedInsert(tx, 2, "taken") : stock.add(tx, message.id().equals("snack-1") ? 1 : 3));

        assertInstanceOf(Outcome.Applied.class, results.get(0).outcome().orElseThrow());
        assertInstanceOf(Outcome.Applied.class, results.get(2).outcome().orElseThrow());
        if (fixture.failedStatementAbortsTransaction()) {
            assertInstanceOf(EffectBrokeTransactionException.class, results.get(1).failure().orElseThrow());
            assertTrue(inbox.find("snack-2").isEmpty());
            assertEquals(4, stock.total());
        } else {
            assertInstanceOf(Outcome.Applied.class, results.get(1).outcome().orElseThrow());
            assertTrue(inbox.find("snack-2").isPresent());
            assertEquals(6, stock.total());
        }
        assertTrue(inbox.find("snack-1").isPresent());
        assertTrue(inbox.find("snack-3").isPresent());
    }

    @Test
    void contentTypeNameWithAnUnpairedSurrogateIsRefused() {
        for (String name : List.of("t\uD800", "t\uDFFF", "\uDC00t", "t\uD800\uD800")) {
            InvalidMessageException refused = assertThrows(InvalidMessageException.class,
                    () -> Content.structured(name, 1, new byte[] {1}), name);
            assertEquals(Problem.CONTENT_TYPE_MALFORMED, refused.problem());
        }
        Inbox<Handle> inbox = inbox();
        Content paired = Content.structured("shipment-\uD83D\uDCE6", 1, new byte[] {7});
        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", paired, tx -> stock.add(tx, 7)));
        assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-7",
                Content.structured("shipment-\uD83D\uDCE6", 1, new byte[] {7}), tx -> stock.add(tx, 7)),
                "a supplementary character in the name survives storage, so the resend is a duplicate");
        assertEquals(7, stock.total());
    }

    @Test
    void originTimeLaterThanClockPlusSkewMarginIsRefusedAndChangesNothing() {
        Inbox<Handle> inbox = inbox();
        Duration margin = fixture.builder().settings().clockSkewMargin();

        InvalidMessageException refused = assertThrows(InvalidMessageException.class, () -> inbox.apply(
                "snack-7", Content.of(7), T0.plus(margin).plusMillis(1), tx -> stock.add(tx, 7)));
        assertEquals(Problem.ORIGIN_IN_FUTURE, refused.problem());
        MessageResult<Integer> inBatch = inbox.applyAll(
                List.of(Message.of("snack-8", Content.of(8)).withOriginTime(T0.plus(Duration.ofDays(2)))),
                (tx, message) -> stock.add(tx, 8)).get(0);
        assertEquals(Problem.ORIGIN_IN_FUTURE,
                assertInstanceOf(InvalidMessageException.class, inBatch.failure().orElseThrow()).problem());
        assertEquals(0, stock.total());
        assertEquals(0, rows(inbox));

        assertInstanceOf(Outcome.Applied.class, inbox.apply(
                "snack-7", Content.of(7), T0.plus(margin), tx -> stock.add(tx, 7)), "the margin itself is allowed");
        assertEquals(7, stock.total());
    }

    @Test
    void sameIdUnderTwoInboxNamesIsTwoBusinesses() {
        Inbox<Handle> receipts = inbox(fixture.builder().name("receipts"));
        Inbox<Handle> audit = inbox(fixture.builder().name("audit"));

        assertInstanceOf(Outcome.Applied.class, receive(receipts, "snack-7", 7));
        assertInstanceOf(Outcome.Applied.class, receive(audit, "snack-7", 8), "another inbox, no conflict");

        assertEquals(15, stock.total());
        assertEquals(1, rows(receipts));
        assertEquals(1, rows(audit));
    }

    @Test
    void resendAfterReopenIsStillADuplicate() {
        Inbox<Handle> before = inbox();
        receive(before, "snack-7", 7);
        before.close();

        Inbox<Handle> after = inbox();
        Outcome<Integer> outcome = receive(after, "snack-7", 7);

        assertInstanceOf(Outcome.Duplicate.class, outcome);
        assertEquals(7, stock.total());
        assertEquals(1, effects.get());
    }

    @Test
    void closedInboxRefusesCalls() {
        Inbox<Handle> inbox = inbox();
        inbox.close();

        assertThrows(dev.idempotent.inbox.InboxException.class, () -> receive(inbox, "snack-7", 7));
        assertEquals(0, effects.get());
    }

    @Test
    void heldWriteLockPastBusyTimeoutIsBusyAndAppliesAfterRelease() {
        Inbox<Handle> inbox = inbox(fixture.builder().name("warehouse").busyTimeout(Duration.ofMillis(200)));

        try (InboxFixture.HeldLock held = fixture.holdWriteLock("warehouse", "snack-7")) {
            InboxBusyException busy = assertThrows(InboxBusyException.class, () -> receive(inbox, "snack-7", 7));
            assertTrue(busy.getMessage().contains("nothing was applied"), busy.getMessage());
        }

        assertEquals(0, effects.get(), "the effect never ran");
        assertEquals(0, stock.total());
        assertEquals(0, rows(inbox));
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7));
        assertEquals(7, stock.total());
        assertStats(inbox, 1, 0, 0, 0, 1, 0);
    }

    static Stream<Arguments> badIds() {
        return Stream.of(
                Arguments.of(null, Problem.ID_MISSING),
                Arguments.of("", Problem.ID_BLANK),
                Arguments.of("   ", Problem.ID_BLANK),
                Arguments.of("x".repeat(256), Problem.ID_TOO_LONG),
                Arguments.of("\uD83D\uDCE6".repeat(256), Problem.ID_TOO_LONG),
                Arguments.of("snack\n7", Problem.ID_CONTROL_CHARACTER),
                Arguments.of("snack\u00007", Problem.ID_CONTROL_CHARACTER),
                Arguments.of("snack\u00857", Problem.ID_CONTROL_CHARACTER),
                Arguments.of("snack\uD8007", Problem.ID_MALFORMED),
                Arguments.of("snack\uDC00", Problem.ID_MALFORMED));
    }

    @ParameterizedTest
    @MethodSource("badIds")
    void badIdIsRefusedAndChangesNothing(String id, Problem problem) {
        Inbox<Handle> inbox = inbox();

        InvalidMessageException refused =
                assertThrows(InvalidMessageException.class, () -> receive(inbox, id, 7));

        assertEquals(problem, refused.problem());
        assertEquals(0, effects.get());
        assertEquals(0, stock.total());
        assertEquals(0, rows(inbox));
        assertStats(inbox, 0, 0, 0, 1, 0, 0);
    }

    @Test
    void longestIdsAreAccepted() {
        Inbox<Handle> inbox = inbox();
        String ascii = "x".repeat(255);
        String emoji = "\uD83D\uDCE6".repeat(255); // 255 characters, 510 UTF-16 units

        assertInstanceOf(Outcome.Applied.class, receive(inbox, ascii, 1));
        assertInstanceOf(Outcome.Applied.class, receive(inbox, emoji, 2));
        assertEquals(emoji, inbox.find(emoji).orElseThrow().id());
        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, emoji, 2));
    }

    @Test
    void missingContentIsRefusedAndChangesNothing() {
        Inbox<Handle> inbox = inbox();

        InvalidMessageException refused = assertThrows(InvalidMessageException.class,
                () -> inbox.apply("snack-7", null, tx -> stock.add(tx, 7)));

        assertEquals(Problem.CONTENT_MISSING, refused.problem());
        assertEquals(0, stock.total());
        assertEquals(0, rows(inbox));
    }

    @Test
    void oversizedContentIsRefusedAndChangesNothing() {
        Inbox<Handle> inbox = inbox(fixture.builder().name("warehouse").maxContentBytes(16));

        InvalidMessageException refused = assertThrows(InvalidMessageException.class,
                () -> inbox.apply("snack-7", Content.ofBytes(new byte[17]), tx -> stock.add(tx, 7)));

        assertEquals(Problem.CONTENT_TOO_LARGE, refused.problem());
        assertEquals(0, stock.total());
        assertEquals(0, rows(inbox));
        assertInstanceOf(Outcome.Applied.class,
                inbox.apply("snack-7", Content.ofBytes(new byte[16]), tx -> stock.add(tx, 7)), "the limit itself passes");
    }

    @Test
    void findReturnsFingerprintAndFirstReceiveTimeButNoContentByDefault() {
        Inbox<Handle> inbox = inbox();
        receive(inbox, "snack-7", 7);

        InboxRecord record = inbox.find("snack-7").orElseThrow();

        assertEquals("warehouse", record.inbox());
        assertEquals("snack-7", record.id());
        assertEquals(Content.of(7).fingerprint(), record.fingerprint());
        assertEquals(T0, record.firstReceivedAt());
        assertTrue(record.content().isEmpty(), "fingerprint only unless full content is asked for");
        assertTrue(inbox.find("snack-8").isEmpty());
    }

    @Test
    void fullContentStorageKeepsTheContent() {
        Inbox<Handle> inbox = inbox(fixture.builder().name("audit").contentStorage(ContentStorage.FULL_CONTENT));
        Content content = Content.structured("shipment", 3, new byte[] {7, 0, 7});
        inbox.apply("snack-7", content, tx -> null);

        assertEquals(content, inbox.find("snack-7").orElseThrow().content().orElseThrow());
    }

    @Test
    void listenerSeesPhasesInsideAndOutcomesAfterTheTransaction() {
        RecordingListener listener = new RecordingListener();
        Inbox<Handle> inbox = inbox(fixture.builder().name("warehouse").listener(listener));

        receive(inbox, "snack-7", 7);
        receive(inbox, "snack-7", 7);
        receive(inbox, "snack-7", 8);
        assertThrows(IllegalStateException.class, () -> inbox.apply("snack-9", Content.of(9), tx -> {
            throw new IllegalStateException("no");
        }));

        assertEquals(List.of(
                "RECORDED snack-7", "EFFECT_DONE snack-7", "COMMITTED snack-7", "APPLIED snack-7",
                "DUPLICATE snack-7",
                "CONFLICT snack-7",
                "RECORDED snack-9", "FAILURE snack-9 IllegalStateException"), listener.events());
    }

    @Test
    void listenerTimesEachApplyThatReachedItsTransactionJustBeforeItsOutcome() {
        List<String> events = new ArrayList<>();
        InboxListener listener = new InboxListener() {
            @Override
            public synchronized void onTimed(String inbox, String id, Duration queued, Duration inTransaction) {
                // Recorded, not asserted: the inbox logs and ignores what a listener throws.
                events.add((queued.isNegative() || inTransaction.isNegative() ? "NEGATIVE " : "TIMED ") + id);
            }

            @Override
            public synchronized void onOutcome(String inbox, Outcome<?> outcome, Duration took) {
                events.add("OUTCOME " + outcome.id());
            }

            @Override
            public synchronized void onFailure(String inbox, String id, Throwable failure, Duration took) {
                events.add("FAILURE " + id);
            }
        };
        Inbox<Handle> inbox = inbox(fixture.builder().name("warehouse").listener(listener));

        receive(inbox, "snack-7", 7);
        receive(inbox, "snack-7", 7);
        assertThrows(IllegalStateException.class, () -> inbox.apply("snack-9", Content.of(9), tx -> {
            throw new IllegalStateException("no");
        }));
        assertThrows(InvalidMessageException.class, () -> inbox.apply("", Content.of(1), tx -> null));

        assertEquals(List.of("TIMED snack-7", "OUTCOME snack-7", "TIMED snack-7", "OUTCOME snack-7",
                "TIMED snack-9", "FAILURE snack-9", "FAILURE "), events,
                "an invalid call never reached a transaction, so it has no timings");
    }

    @Test
    void committedPhaseSeesTheCommitFromAnotherConnection() {
        List<Long> totalsSeen = new ArrayList<>();
        InboxListener listener = new InboxListener() {
            @Override
            public void onPhase(String inbox, String id, Phase phase) {
                if (phase == Phase.COMMITTED) {
                    totalsSeen.add(stock.total());
                }
            }
        };
        receive(inbox(fixture.builder().name("warehouse").listener(listener)), "snack-7", 7);

        assertEquals(List.of(7L), totalsSeen);
    }

    @Test
    void listenerFailureInsideTheTransactionRollsItBack() {
        InboxListener failing = new InboxListener() {
            @Override
            public void onPhase(String inbox, String id, Phase phase) {
                if (phase == Phase.EFFECT_DONE) {
                    throw new IllegalStateException("listener refused");
                }
            }
        };
        Inbox<Handle> inbox = inbox(fixture.builder().name("warehouse").listener(failing));

        assertThrows(IllegalStateException.class, () -> receive(inbox, "snack-7", 7));

        assertEquals(0, stock.total());
        assertEquals(0, rows(inbox));
    }

    @Test
    void listenerFailureAfterCommitDoesNotTurnTheOutcomeIntoAFailure() {
        InboxListener failing = new InboxListener() {
            @Override
            public void onOutcome(String inbox, Outcome<?> outcome, Duration took) {
                throw new IllegalStateException("listener broke");
            }
        };
        Inbox<Handle> inbox = inbox(fixture.builder().name("warehouse").listener(failing));

        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7));
        assertEquals(7, stock.total());
    }

    @Test
    void concurrentDeliveriesOfOneIdApplyItExactlyOnce() throws Exception {
        Inbox<Handle> inbox = inbox();
        int threads = 16;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Outcome<Integer>>> results = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                long qty = i % 4 == 3 ? 8 : 7; // a quarter offer different content
                results.add(pool.submit(() -> {
                    start.await();
                    return receive(inbox, "snack-7", qty);
                }));
            }
            List<Outcome<Integer>> outcomes = new ArrayList<>();
            for (Future<Outcome<Integer>> result : results) {
                outcomes.add(result.get(60, TimeUnit.SECONDS));
            }

            List<Outcome<Integer>> applied = outcomes.stream().filter(Outcome::isNewlyApplied).toList();
            assertEquals(1, applied.size(), "exactly one delivery applies");
            assertEquals(1, effects.get());
            long appliedQty = stock.total();
            assertTrue(appliedQty == 7 || appliedQty == 8);
            for (Outcome<Integer> outcome : outcomes) {
                if (!outcome.isNewlyApplied()) {
                    assertTrue(outcome instanceof Outcome.Duplicate || outcome instanceof Outcome.Conflict);
                }
            }
            assertEquals(threads, inbox.stats().attempts());
            assertEquals(0, inbox.stats().failed() + inbox.stats().busy());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentDeliveriesOfDistinctIdsAllApply() throws Exception {
        Inbox<Handle> inbox = inbox();
        int threads = 8;
        int perThread = 25;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<Outcome<Integer>>>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    start.await();
                    List<Outcome<Integer>> outcomes = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        outcomes.add(receive(inbox, "item-" + thread + "-" + i, 1));
                    }
                    return outcomes;
                }));
            }
            start.countDown();
            for (Future<List<Outcome<Integer>>> future : done) {
                for (Outcome<Integer> outcome : future.get(120, TimeUnit.SECONDS)) {
                    assertInstanceOf(Outcome.Applied.class, outcome);
                }
            }
            assertEquals(threads * perThread, effects.get(), "each effect ran once");
            assertEquals(threads * perThread, stock.total());
            assertEquals(threads * perThread, rows(inbox));
            assertStats(inbox, threads * perThread, 0, 0, 0, 0, 0);
        } finally {
            pool.shutdownNow();
        }
    }
}
