package dev.idempotent.inbox.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.ContentStorage;
import dev.idempotent.inbox.ContentType;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.InvalidMessageException.Problem;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.testing.InMemoryDatabase;
import dev.idempotent.inbox.testing.InMemoryStore;
import dev.idempotent.inbox.testing.MutableClock;
import dev.idempotent.inbox.testing.RecordingListener;
import dev.idempotent.inbox.testing.TestInbox;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What {@link InboxEngine} does over a store, whichever way it runs its transactions: the
 * decision, the effect, the listener, the counters, validation, origin times, failed commits and
 * batches. Run over an {@link InMemoryDatabase}, whose transactions are real but whose failures
 * can be switched on.
 */
abstract class InboxEngineContract {

    static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");
    static final Duration RETENTION = Duration.ofDays(30);
    static final Duration SKEW = InboxSettings.DEFAULT_CLOCK_SKEW_MARGIN;

    final InMemoryDatabase database = new InMemoryDatabase();
    final MutableClock clock = new MutableClock(T0);
    final RecordingListener listener = new RecordingListener(database);
    final AtomicInteger effects = new AtomicInteger();
    private final List<TestInbox> opened = new ArrayList<>();

    /** A builder for an inbox over {@code database}, running transactions this test class's way. */
    abstract InboxBuilder<TestInbox> builder(InMemoryDatabase database);

    @AfterEach
    void closeInboxes() {
        opened.forEach(TestInbox::close);
    }

    TestInbox inbox() {
        return inbox(configured());
    }

    InboxBuilder<TestInbox> configured() {
        return builder(database).name("warehouse").clock(clock).listener(listener).retention(RETENTION);
    }

    TestInbox inbox(InboxBuilder<TestInbox> builder) {
        TestInbox inbox = builder.build();
        opened.add(inbox);
        return inbox;
    }

    /** Adds {@code qty} to the stock, counting how often an effect really ran. */
    Outcome<Long> receive(TestInbox inbox, String id, long qty) {
        return receive(inbox, id, qty, null);
    }

    Outcome<Long> receive(TestInbox inbox, String id, long qty, Instant originTime) {
        return inbox.apply(id, Content.of(qty), originTime, tx -> add(tx, qty));
    }

    long add(InMemoryStore.Tx tx, long qty) {
        effects.incrementAndGet();
        return tx.add("stock", qty);
    }

    long stock() {
        return database.value("stock");
    }

    static long quantity(Message message) {
        return ByteBuffer.wrap(message.content().bytes()).getLong();
    }

    /** Compares every counter, and checks that attempts is their sum. */
    static void assertStats(TestInbox inbox, long applied, long duplicates, long conflicts, long invalid, long stale,
            long busy, long failed) {
        InboxStats stats = inbox.stats();
        assertEquals(List.of(applied, duplicates, conflicts, invalid, stale, busy, failed),
                List.of(stats.applied(), stats.duplicates(), stats.conflicts(), stats.invalid(), stats.stale(),
                        stats.busy(), stats.failed()),
                "applied, duplicates, conflicts, invalid, stale, busy, failed");
        assertEquals(applied + duplicates + conflicts + invalid + stale + busy + failed, stats.attempts());
    }

    // ---- the decision ----

    @Test
    void newIdIsAppliedAndItsWritesCommitWithTheRecordAtAMillisecondReceiveTime() {
        TestInbox inbox = inbox();
        clock.advance(Duration.ofNanos(1_700_000));

        Outcome<Long> outcome = receive(inbox, "snack-7", 7);

        assertInstanceOf(Outcome.Applied.class, outcome);
        Outcome.Applied<Long> applied = (Outcome.Applied<Long>) outcome;
        assertEquals("snack-7", applied.id());
        assertEquals(7L, applied.result());
        assertEquals(T0.plusMillis(1), applied.receivedAt(), "stored times are millisecond-precise");
        assertEquals(7, stock());
        assertEquals(1, database.commits());
        InboxRecord record = inbox.find("snack-7").orElseThrow();
        assertEquals(new InboxRecord("warehouse", "snack-7", Content.of(7).fingerprint(), T0.plusMillis(1),
                Optional.empty()), record, "fingerprint only, by default");
    }

    @Test
    void sameIdWithSameContentIsADuplicateThatRunsNoEffect() {
        TestInbox inbox = inbox();
        receive(inbox, "snack-7", 7);
        clock.advance(Duration.ofHours(1));

        Outcome<Long> outcome = receive(inbox, "snack-7", 7);

        assertInstanceOf(Outcome.Duplicate.class, outcome);
        Outcome.Duplicate<Long> duplicate = (Outcome.Duplicate<Long>) outcome;
        assertEquals(T0, duplicate.firstReceivedAt());
        assertEquals(Content.of(7).fingerprint(), duplicate.fingerprint());
        assertTrue(duplicate.isAccepted());
        assertEquals(1, effects.get());
        assertEquals(7, stock());
        assertEquals(1, database.rows("warehouse"));
        assertEquals(T0, inbox.find("snack-7").orElseThrow().firstReceivedAt(), "the record is left as it was");
    }

    @Test
    void sameIdWithOtherContentIsAConflictThatKeepsTheFirstBusiness() {
        TestInbox inbox = inbox();
        receive(inbox, "snack-7", 7);

        Outcome<Long> outcome = receive(inbox, "snack-7", 8);

        assertInstanceOf(Outcome.Conflict.class, outcome);
        Outcome.Conflict<Long> conflict = (Outcome.Conflict<Long>) outcome;
        assertEquals(Content.of(7).fingerprint(), conflict.stored());
        assertEquals(Content.of(8).fingerprint(), conflict.offered());
        assertEquals(T0, conflict.firstReceivedAt());
        assertFalse(conflict.contentTypeChanged());
        assertFalse(conflict.isAccepted());
        assertEquals(1, effects.get());
        assertEquals(7, stock());
        assertEquals(Content.of(7).fingerprint(), inbox.find("snack-7").orElseThrow().fingerprint());
    }

    @Test
    void conflictTellsAChangedContentTypeFromChangedContent() {
        TestInbox inbox = inbox();
        byte[] canonical = "{\"qty\":7}".getBytes(StandardCharsets.UTF_8);
        inbox.apply("shipment-1", Content.structured("shipment", 1, canonical), tx -> add(tx, 7));
        inbox.apply("snack-7", Content.of(7), tx -> add(tx, 7));

        Outcome<Long> newVersion = inbox.apply("shipment-1", Content.structured("shipment", 2, canonical),
                tx -> add(tx, 7));
        Outcome<Long> newType = inbox.apply("snack-7", Content.of("7"), tx -> add(tx, 7));

        assertInstanceOf(Outcome.Conflict.class, newVersion);
        Outcome.Conflict<Long> versionConflict = (Outcome.Conflict<Long>) newVersion;
        assertTrue(versionConflict.contentTypeChanged());
        assertEquals(new ContentType("shipment", 1), versionConflict.stored().contentType());
        assertEquals(new ContentType("shipment", 2), versionConflict.offered().contentType());
        assertInstanceOf(Outcome.Conflict.class, newType);
        Outcome.Conflict<Long> typeConflict = (Outcome.Conflict<Long>) newType;
        assertTrue(typeConflict.contentTypeChanged());
        assertEquals(ContentType.INT64, typeConflict.stored().contentType());
        assertEquals(ContentType.UTF8, typeConflict.offered().contentType());
        assertEquals(14, stock(), "neither conflict ran its effect");
    }

    @Test
    void fullContentStorageKeepsTheContentBesideTheFingerprint() {
        TestInbox inbox = inbox(configured().contentStorage(ContentStorage.FULL_CONTENT));
        Content content = Content.structured("shipment", 1, new byte[] {1, 2, 3});

        inbox.apply("shipment-1", content, tx -> add(tx, 1));

        assertEquals(Optional.of(content), inbox.find("shipment-1").orElseThrow().content());
    }

    @Test
    void findReadsOnlyCommittedData() {
        TestInbox inbox = inbox();
        AtomicReference<Optional<InboxRecord>> seenInside = new AtomicReference<>();

        inbox.apply("snack-7", Content.of(7), tx -> {
            seenInside.set(inbox.find("snack-7"));
            return add(tx, 7);
        });

        assertEquals(Optional.empty(), seenInside.get(), "the claim was not committed yet");
        assertTrue(inbox.find("snack-7").isPresent());
        assertThrows(InvalidMessageException.class, () -> inbox.find("bad\nid"));
    }

    // ---- the effect's exceptions ----

    @Test
    void checkedExceptionOfTheEffectReachesTheCallerUnchangedAndNothingIsRecorded() {
        TestInbox inbox = inbox();
        IOException failure = new IOException("the shelf is full");

        IOException thrown = assertThrows(IOException.class, () -> inbox.apply("snack-7", Content.of(7), tx -> {
            add(tx, 7);
            throw failure;
        }));

        assertNothingRecordedAfter(inbox, failure, thrown);
    }

    @Test
    void uncheckedExceptionOfTheEffectReachesTheCallerUnchangedAndNothingIsRecorded() {
        TestInbox inbox = inbox();
        IllegalStateException failure = new IllegalStateException("the shelf is full");

        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> inbox.apply("snack-7", Content.of(7), tx -> {
                    add(tx, 7);
                    throw failure;
                }));

        assertNothingRecordedAfter(inbox, failure, thrown);
    }

    private void assertNothingRecordedAfter(TestInbox inbox, Exception failure, Exception thrown) {
        assertSame(failure, thrown, "the effect's own exception, not wrapped");
        assertEquals(0, thrown.getSuppressed().length);
        assertEquals(0, stock(), "the effect's write was rolled back with the claim");
        assertTrue(inbox.find("snack-7").isEmpty());
        assertEquals(1, database.rollbacks());
        assertEquals(0, database.commits());
        assertStats(inbox, 0, 0, 0, 0, 0, 0, 1);
        assertSame(failure, listener.failures().get(0));
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "snack-7", 7), "a later delivery is applied");
        assertEquals(7, stock());
    }

    // ---- the listener ----

    @Test
    void listenerHearsPhasesInsideTheTransactionAndOutcomesAfterItEnds() {
        TestInbox inbox = inbox();
        AtomicReference<List<String>> heardBeforeEffect = new AtomicReference<>();

        inbox.apply("a", Content.of(1), tx -> {
            heardBeforeEffect.set(listener.events());
            return add(tx, 1);
        });
        receive(inbox, "a", 1);
        receive(inbox, "a", 2);

        assertEquals(List.of("RECORDED a open commits=0 rollbacks=0"), heardBeforeEffect.get());
        assertEquals(List.of(
                "RECORDED a open commits=0 rollbacks=0",
                "EFFECT_DONE a open commits=0 rollbacks=0",
                "COMMITTED a closed commits=1 rollbacks=0",
                "APPLIED a closed commits=1 rollbacks=0",
                "DUPLICATE a closed commits=2 rollbacks=0",
                "CONFLICT a closed commits=3 rollbacks=0"), listener.events(),
                "no phases for a duplicate or a conflict");
    }

    @Test
    void listenerHearsAFailureAfterTheRollback() {
        TestInbox inbox = inbox();

        assertThrows(IllegalStateException.class, () -> inbox.apply("a", Content.of(1), tx -> {
            throw new IllegalStateException("no room");
        }));

        assertEquals(List.of(
                "RECORDED a open commits=0 rollbacks=0",
                "FAILURE a IllegalStateException closed commits=0 rollbacks=1"), listener.events());
    }

    @Test
    void listenerThatThrowsInsideTheTransactionFailsTheCallButAfterTheCommitIsIgnored() {
        IllegalStateException refusal = new IllegalStateException("the listener refuses");
        TestInbox refusing = inbox(configured().name("refusing").listener(new InboxListener() {
            @Override
            public void onPhase(String inbox, String id, Phase phase) {
                if (phase == Phase.EFFECT_DONE) {
                    throw refusal;
                }
            }
        }));
        TestInbox careless = inbox(configured().name("careless").listener(new InboxListener() {
            @Override
            public void onPhase(String inbox, String id, Phase phase) {
                if (phase == Phase.COMMITTED) {
                    throw new IllegalStateException("after the commit");
                }
            }

            @Override
            public void onOutcome(String inbox, Outcome<?> outcome, Duration took) {
                throw new IllegalStateException("after the commit");
            }
        }));

        assertSame(refusal, assertThrows(IllegalStateException.class, () -> receive(refusing, "a", 1)));
        Outcome<Long> outcome = receive(careless, "b", 2);

        assertTrue(refusing.find("a").isEmpty());
        assertInstanceOf(Outcome.Applied.class, outcome, "a committed message stays applied");
        assertEquals(2, stock());
        assertStats(careless, 1, 0, 0, 0, 0, 0, 0);
    }

    // ---- counters ----

    @Test
    void everyCallIsCountedOnceAndAttemptsIsTheSumOfTheCounters() {
        TestInbox inbox = inbox(configured().busyTimeout(Duration.ofMillis(20)));
        inbox.retention().purge(); // horizon T0 - retention

        receive(inbox, "a", 1);
        receive(inbox, "a", 1);
        receive(inbox, "a", 2);
        assertThrows(InvalidMessageException.class, () -> receive(inbox, " ", 1));
        assertThrows(StaleMessageException.class, () -> receive(inbox, "old", 1, T0.minus(RETENTION)));
        InMemoryDatabase.WriterHold hold = database.holdWriter();
        try {
            assertThrows(InboxBusyException.class, () -> receive(inbox, "b", 1));
        } finally {
            hold.close();
        }
        assertThrows(IllegalStateException.class, () -> inbox.apply("c", Content.of(1), tx -> {
            throw new IllegalStateException("no room");
        }));

        assertStats(inbox, 1, 1, 1, 1, 1, 1, 1);
        assertEquals(2, inbox.stats().accepted());
        assertEquals(4, listener.failures().size(), "one failure heard per call that threw");
    }

    @Test
    void callThatFindsTheWriterBusyGetsInboxBusyExceptionAndAppliesNothing() {
        TestInbox inbox = inbox(configured().busyTimeout(Duration.ofMillis(20)));

        InboxBusyException busy;
        InMemoryDatabase.WriterHold hold = database.holdWriter();
        try {
            busy = assertThrows(InboxBusyException.class, () -> receive(inbox, "a", 1));
        } finally {
            hold.close();
        }

        assertTrue(busy.getMessage().contains("nothing was applied"), busy.getMessage());
        assertEquals(0, effects.get());
        assertTrue(inbox.find("a").isEmpty());
        assertStats(inbox, 0, 0, 0, 0, 0, 1, 0);
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "a", 1), "retrying later is safe");
    }

    // ---- validation ----

    static Stream<Arguments> invalidMessages() {
        return Stream.of(
                Arguments.of("missing id", null, Content.of(1), null, Problem.ID_MISSING),
                Arguments.of("empty id", "", Content.of(1), null, Problem.ID_BLANK),
                Arguments.of("blank id", " \t", Content.of(1), null, Problem.ID_BLANK),
                Arguments.of("control character", "snack\n7", Content.of(1), null, Problem.ID_CONTROL_CHARACTER),
                Arguments.of("unpaired surrogate", "snack\uD800", Content.of(1), null, Problem.ID_MALFORMED),
                Arguments.of("too long", "x".repeat(256), Content.of(1), null, Problem.ID_TOO_LONG),
                Arguments.of("missing content", "snack-7", null, null, Problem.CONTENT_MISSING),
                Arguments.of("too large", "snack-7", Content.ofBytes(new byte[65]), null, Problem.CONTENT_TOO_LARGE),
                Arguments.of("origin in the future", "snack-7", Content.of(1), T0.plus(SKEW).plusMillis(1),
                        Problem.ORIGIN_IN_FUTURE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidMessages")
    void invalidMessageIsRefusedBeforeAnyTransactionBegins(
            String what, String id, Content content, Instant originTime, Problem problem) {
        TestInbox inbox = inbox(configured().maxContentBytes(64));

        InvalidMessageException refused = assertThrows(InvalidMessageException.class,
                () -> inbox.apply(id, content, originTime, tx -> add(tx, 1)));

        assertEquals(problem, refused.problem());
        assertEquals(0, database.begins(), "the store saw no transaction");
        assertEquals(0, effects.get());
        assertStats(inbox, 0, 0, 0, 1, 0, 0, 0);
        assertSame(refused, listener.failures().get(0));
    }

    @Test
    void longestIdAndLargestContentAreAccepted() {
        TestInbox inbox = inbox(configured().maxContentBytes(64));
        String longest = "\uD83D\uDCE6".repeat(255); // 255 code points, 510 chars

        Outcome<Long> outcome = inbox.apply(longest, Content.ofBytes(new byte[64]), tx -> add(tx, 1));

        assertInstanceOf(Outcome.Applied.class, outcome);
    }

    @Test
    void nullEffectIsRefusedBeforeAnyTransactionBegins() {
        TestInbox inbox = inbox();

        assertThrows(NullPointerException.class, () -> inbox.apply("a", Content.of(1), null));
        assertThrows(NullPointerException.class, () -> inbox.applyAll(List.of(Message.of("a", Content.of(1))), null));
        assertThrows(NullPointerException.class, () -> inbox.applyAll(null, (tx, message) -> 1));

        assertEquals(0, database.begins());
    }

    // ---- origin times ----

    @Test
    void originLaterThanTheClockPlusTheSkewMarginIsRefusedWhetherTheIdIsNewOrNot() {
        TestInbox inbox = inbox();
        receive(inbox, "known", 1, T0);
        int begins = database.begins();

        InvalidMessageException known = assertThrows(InvalidMessageException.class,
                () -> receive(inbox, "known", 1, T0.plus(SKEW).plusMillis(1)));
        InvalidMessageException fresh = assertThrows(InvalidMessageException.class,
                () -> receive(inbox, "new", 1, T0.plus(Duration.ofDays(1))));

        assertEquals(Problem.ORIGIN_IN_FUTURE, known.problem());
        assertEquals(Problem.ORIGIN_IN_FUTURE, fresh.problem());
        assertEquals(begins, database.begins(), "refused before any transaction");
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "edge", 1, T0.plus(SKEW)),
                "an origin exactly at clock + margin is accepted");
        assertEquals(2, stock());
    }

    @Test
    void newMessageThatMayPredateTheHorizonIsRefusedAsStaleAndWritesNothing() {
        TestInbox inbox = inbox();
        receive(inbox, "kept", 1, T0);
        clock.advance(Duration.ofDays(20));
        receive(inbox, "recent", 1, clock.instant());
        clock.advance(Duration.ofDays(20)); // T0 + 40 days: "kept" is purged, "recent" stays
        Instant horizon = inbox.retention().purge().horizon();
        assertEquals(T0.plus(Duration.ofDays(10)), horizon);
        Instant tooOld = horizon.plus(SKEW).minusMillis(1);

        StaleMessageException stale = assertThrows(StaleMessageException.class,
                () -> receive(inbox, "late", 5, tooOld));

        assertEquals("late", stale.id());
        assertEquals(tooOld, stale.originTime());
        assertEquals(horizon, stale.horizon());
        assertTrue(inbox.find("late").isEmpty(), "its claim was rolled back");
        assertEquals(2, stock());
        assertEquals(1, inbox.retention().status().staleRefusals());
        assertThrows(StaleMessageException.class, () -> receive(inbox, "kept", 1, T0),
                "the purged id cannot be told from a new one");
        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, "recent", 1, T0),
                "an id still kept is judged by its row, however old its origin");
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "edge", 5, horizon.plus(SKEW)));
        assertStats(inbox, 3, 1, 0, 0, 2, 0, 0);
    }

    // ---- commits that fail ----

    @Test
    void failedCommitGivesTheCallerTheStorageErrorAndNothingIsCountedAsApplied() {
        TestInbox inbox = inbox();
        database.failNextCommit();

        InboxStorageException failure = assertThrows(InboxStorageException.class, () -> receive(inbox, "a", 1));

        assertEquals(InboxStorageException.Kind.OTHER, failure.kind());
        assertTrue(inbox.find("a").isEmpty());
        assertEquals(0, stock());
        assertEquals(1, database.rollbacks(), "rolled back after the failed commit");
        assertEquals(0, database.openTransactions());
        assertStats(inbox, 0, 0, 0, 0, 0, 0, 1);
        assertEquals(List.of(
                "RECORDED a open commits=0 rollbacks=0",
                "EFFECT_DONE a open commits=0 rollbacks=0",
                "FAILURE a InboxStorageException closed commits=0 rollbacks=1"), listener.events());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "a", 1));
    }

    @Test
    void unknownOutcomeOfACommitPassesThroughAndAResendTellsTheAnswer() {
        TestInbox inbox = inbox();
        database.loseNextCommitReply();

        assertThrows(OutcomeUnknownException.class, () -> receive(inbox, "a", 1));

        assertStats(inbox, 0, 0, 0, 0, 0, 0, 1);
        assertTrue(listener.events().stream().noneMatch(event -> event.startsWith("COMMITTED")));
        assertInstanceOf(Outcome.Duplicate.class, receive(inbox, "a", 1), "this commit did take effect");
        assertEquals(1, stock());
    }

    // ---- closing ----

    @Test
    void closedInboxRefusesEveryCallAndClosesItsStore() {
        TestInbox inbox = inbox();
        inbox.close();

        InboxException apply = assertThrows(InboxException.class, () -> receive(inbox, "a", 1));
        assertThrows(InboxException.class, () -> inbox.applyAll(List.of(Message.of("a", Content.of(1))),
                (tx, message) -> add(tx, 1)));
        assertThrows(InboxException.class, () -> inbox.find("a"));

        assertEquals(InboxException.class, apply.getClass());
        assertTrue(apply.getMessage().contains("closed"), apply.getMessage());
        assertTrue(inbox.store().isClosed());
        assertEquals(0, database.begins());
        inbox.close(); // a second close does nothing
    }

    // ---- batches ----

    @Test
    void applyAllGivesOneResultPerMessageInOrderFromOneTransaction() {
        TestInbox inbox = inbox();
        receive(inbox, "old", 3);
        int begins = database.begins();
        List<Message> batch = List.of(
                Message.of("a", Content.of(1)),
                Message.of("b", Content.of(2)),
                Message.of("a", Content.of(1)),
                Message.of("b", Content.of(9)),
                Message.of("old", Content.of(3)),
                Message.of("old", Content.of(4)),
                Message.of("c", Content.of(5)));

        List<MessageResult<Long>> results = inbox.applyAll(batch, (tx, message) -> add(tx, quantity(message)));

        assertEquals(batch, results.stream().map(MessageResult::message).toList(), "in the order given");
        assertEquals(List.of("Applied", "Applied", "Duplicate", "Conflict", "Duplicate", "Conflict", "Applied"),
                results.stream().map(result -> result.outcome().orElseThrow().getClass().getSimpleName()).toList());
        assertEquals(List.of(4L, 6L, 11L), List.of(0, 1, 6).stream()
                        .map(i -> ((Outcome.Applied<Long>) results.get(i).outcome().orElseThrow()).result()).toList(),
                "each applied message carries its own effect's result");
        assertEquals(begins + 1, database.begins(), "one transaction for the batch");
        assertEquals(3 + 1 + 2 + 5, stock());
        assertStats(inbox, 4, 2, 2, 0, 0, 0, 0);
        assertEquals(List.of("COMMITTED a closed commits=2 rollbacks=0", "APPLIED a closed commits=2 rollbacks=0"),
                listener.events().stream().filter(e -> e.matches("(COMMITTED|APPLIED) a .*")).toList(),
                "committed phases come after the batch's commit");
    }

    @Test
    void batchCompletionWritesInTheBatchTransactionWithTheResultsEvenForABatchOfDuplicates() {
        TestInbox inbox = inbox();
        receive(inbox, "old", 3);
        int begins = database.begins();
        List<List<String>> seen = new ArrayList<>();

        List<MessageResult<Long>> results = inbox.applyAll(
                List.of(Message.of("old", Content.of(3)), Message.of("old", Content.of(4))),
                (tx, message) -> add(tx, quantity(message)),
                (tx, judged) -> {
                    seen.add(judged.stream().map(r -> r.outcome().orElseThrow().getClass().getSimpleName()).toList());
                    add(tx, 100); // no effect ran, yet this write commits with the batch
                });

        assertEquals(List.of(List.of("Duplicate", "Conflict")), seen, "completion sees every result, once");
        assertEquals(2, results.size());
        assertEquals(begins + 1, database.begins(), "completion shares the batch's transaction");
        assertEquals(3 + 100, stock());
    }

    @Test
    void failingBatchCompletionRollsBackTheWholeBatch() {
        TestInbox inbox = inbox();
        IllegalStateException refusal = new IllegalStateException("position store refused");

        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> inbox.applyAll(
                List.of(Message.of("a", Content.of(1)), Message.of("b", Content.of(2))),
                (tx, message) -> add(tx, quantity(message)),
                (tx, judged) -> {
                    throw refusal;
                }));

        assertSame(refusal, thrown, "unchanged");
        assertEquals(0, stock());
        assertTrue(inbox.find("a").isEmpty());
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "a", 1), "nothing of the batch was recorded");
    }

    @Test
    void failingEffectInABatchFailsOnlyItsOwnMessage() {
        TestInbox inbox = inbox();
        IOException checked = new IOException("shelf 3 is broken");
        IllegalStateException unchecked = new IllegalStateException("shelf 4 is broken");
        List<Message> batch = List.of(
                Message.of("a", Content.of(1)),
                Message.of("boom-3", Content.of(30)),
                Message.of("b", Content.of(2)),
                Message.of("boom-4", Content.of(40)),
                Message.of("c", Content.of(4)));

        List<MessageResult<Long>> results = inbox.applyAll(batch, (tx, message) -> {
            long added = add(tx, quantity(message)); // written, then undone with its savepoint
            if (message.id().equals("boom-3")) {
                throw checked;
            }
            if (message.id().equals("boom-4")) {
                throw unchecked;
            }
            return added;
        });

        assertSame(checked, results.get(1).failure().orElseThrow());
        assertSame(unchecked, results.get(3).failure().orElseThrow());
        for (int i : new int[] {0, 2, 4}) {
            assertInstanceOf(Outcome.Applied.class, results.get(i).outcome().orElseThrow());
        }
        assertEquals(1 + 2 + 4, stock());
        assertTrue(inbox.find("boom-3").isEmpty());
        assertTrue(inbox.find("boom-4").isEmpty());
        assertEquals(3, database.rows("warehouse"));
        assertStats(inbox, 3, 0, 0, 0, 0, 0, 2);
        assertInstanceOf(Outcome.Applied.class, receive(inbox, "boom-3", 30), "the failed message applies on retry");
    }

    @Test
    void invalidAndStaleMessagesInABatchAreReportedAndTheOthersApplied() {
        TestInbox inbox = inbox(configured().maxContentBytes(64));
        clock.advance(RETENTION.plusDays(1));
        Instant horizon = inbox.retention().purge().horizon();
        List<Message> batch = List.of(
                Message.of("a", Content.of(1)),
                Message.of(" ", Content.of(1)),
                Message.of("bad\nid", Content.of(1)),
                Message.of("no-content", null),
                Message.of("huge", Content.ofBytes(new byte[65])),
                Message.of("future", Content.of(1)).withOriginTime(clock.instant().plus(SKEW).plusSeconds(1)),
                Message.of("stale", Content.of(1)).withOriginTime(horizon),
                Message.of("b", Content.of(2)));

        List<MessageResult<Long>> results = inbox.applyAll(batch, (tx, message) -> add(tx, quantity(message)));

        assertEquals(8, results.size());
        assertEquals(List.of(Problem.ID_BLANK, Problem.ID_CONTROL_CHARACTER, Problem.CONTENT_MISSING,
                        Problem.CONTENT_TOO_LARGE, Problem.ORIGIN_IN_FUTURE),
                results.subList(1, 6).stream().map(result -> assertInstanceOf(InvalidMessageException.class,
                        result.failure().orElseThrow()).problem()).toList());
        assertInstanceOf(StaleMessageException.class, results.get(6).failure().orElseThrow());
        assertInstanceOf(Outcome.Applied.class, results.get(0).outcome().orElseThrow());
        assertInstanceOf(Outcome.Applied.class, results.get(7).outcome().orElseThrow());
        assertEquals(3, stock());
        assertEquals(2, database.rows("warehouse"));
        assertStats(inbox, 2, 0, 0, 5, 1, 0, 0);
    }

    @Test
    void failingCommitOfABatchFailsEveryValidMessageAndRecordsNothing() {
        TestInbox inbox = inbox();
        database.failNextCommit();
        List<Message> batch = List.of(
                Message.of("a", Content.of(1)), Message.of("", Content.of(1)), Message.of("b", Content.of(2)));

        assertThrows(InboxStorageException.class,
                () -> inbox.applyAll(batch, (tx, message) -> add(tx, quantity(message))));

        assertEquals(0, stock());
        assertEquals(0, database.rows("warehouse"));
        assertStats(inbox, 0, 0, 0, 1, 0, 0, 2);
        assertEquals(List.of("FAILURE a InboxStorageException", "FAILURE b InboxStorageException"),
                listener.events().stream().filter(e -> e.contains("InboxStorageException"))
                        .map(e -> e.substring(0, e.indexOf(" closed"))).toList());
        assertTrue(listener.events().stream().noneMatch(e -> e.startsWith("COMMITTED") || e.startsWith("APPLIED")));
    }

    @Test
    void unknownOutcomeOfABatchPassesThrough() {
        TestInbox inbox = inbox();
        database.loseNextCommitReply();
        List<Message> batch = List.of(Message.of("a", Content.of(1)), Message.of("b", Content.of(2)));

        assertThrows(OutcomeUnknownException.class,
                () -> inbox.applyAll(batch, (tx, message) -> add(tx, quantity(message))));

        assertStats(inbox, 0, 0, 0, 0, 0, 0, 2);
        assertTrue(inbox.applyAll(batch, (tx, message) -> add(tx, quantity(message))).stream()
                .allMatch(result -> result.outcome().orElseThrow() instanceof Outcome.Duplicate));
        assertEquals(3, stock());
    }
}
