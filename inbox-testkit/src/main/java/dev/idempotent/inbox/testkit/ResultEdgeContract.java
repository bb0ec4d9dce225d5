package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.ResultSeal;
import dev.idempotent.inbox.StoredResult;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.jdbi.JdbiResultInbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The edges of stored results ({@link dev.idempotent.inbox.Inbox#storingResults}) every Jdbi
 * adapter must hold against a real database, where {@link ResultContract} holds the plain cases:
 * tries to make a stored result lie (a duplicate without the first call's result or with another
 * call's, a result recorded without its effect, a retry that does not run again, a result read as
 * another type). Every test states what must hold whatever the interleaving.
 *
 * <p>Subclass it in the adapter's tests and implement {@link #openFixture()}. The concurrent first
 * applies depend on the database's own dimension (isolation levels, commit modes), so the subclass
 * declares that test, parameterized as it needs, and runs its body with
 * {@link #assertEveryDuplicateCarriesTheWinnersResult(CallerTransaction)}.
 *
 * @param <F> the adapter's fixture, for the subclass's own scenarios
 */
public abstract class ResultEdgeContract<F extends InboxFixture> {

    /** A byte-array codec of type {@code orders.Confirmation}, version 1. */
    protected static final ResultCodec<byte[]> BYTES = ResultCodec.bytes("orders.Confirmation", 1);

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");

    /** The fixture of the running test. */
    protected F fixture;
    /** The inbox named {@code attack} over the fixture, with the fixture's default settings. */
    protected JdbiInbox inbox;

    /**
     * A fixture over a fresh, real database; closed after each test.
     *
     * @return the fixture
     * @throws Exception if the database cannot be prepared; the test fails
     */
    protected abstract F openFixture() throws Exception;

    /**
     * The statement that creates table {@code effect (id, caller)}, both text columns of at least
     * 64 characters, that the effects of these tests write to.
     *
     * @return the DDL; by default with {@code TEXT} columns
     */
    protected String effectTableDdl() {
        return "CREATE TABLE effect (id TEXT NOT NULL, caller TEXT NOT NULL)";
    }

    @BeforeEach
    void openInbox() throws Exception {
        fixture = openFixture();
        inbox = fixture.builder().name("attack").build();
    }

    @AfterEach
    void closeInbox() {
        inbox.close();
        fixture.close();
    }

    /**
     * Closes {@link #inbox} and opens it again, named {@code attack}, with {@code settings}.
     *
     * @param settings what to set on the fixture's builder
     */
    protected final void reopenInbox(UnaryOperator<InboxBuilder<? extends JdbiInbox>> settings) {
        inbox.close();
        inbox = settings.apply(fixture.builder().name("attack")).build();
    }

    /**
     * Encodes {@code text} as UTF-8.
     *
     * @param text the text
     * @return its bytes
     */
    protected static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Creates table {@code effect} with {@link #effectTableDdl()}. */
    protected final void createEffectTable() {
        inbox.jdbi().useHandle(handle -> handle.execute(effectTableDdl()));
    }

    /**
     * {@return the number of rows in table {@code effect}}
     */
    protected final long effectRows() {
        return inbox.jdbi().withHandle(handle -> handle.createQuery("SELECT count(*) FROM effect")
                .mapTo(Long.class).one());
    }

    /**
     * The effect of these tests: writes row {@code (id, caller)} to table {@code effect}.
     *
     * @param tx the transaction of the call
     * @param id the business id
     * @param caller who applies
     * @return {@code id:caller} in UTF-8, the result to store
     */
    protected static byte[] effect(Handle tx, String id, String caller) {
        tx.execute("INSERT INTO effect (id, caller) VALUES (?, ?)", id, caller);
        return utf8(id + ":" + caller);
    }

    /** How a joined caller of the concurrent first applies runs the joined call in a transaction of its own. */
    @FunctionalInterface
    protected interface CallerTransaction {
        /**
         * Runs {@code call} in a transaction the caller opens over {@code inbox}'s Jdbi and commits.
         *
         * @param inbox the inbox applied to
         * @param call the joined call
         * @return what {@code call} returned
         */
        Outcome<byte[]> inTransaction(JdbiInbox inbox, HandleCallback<Outcome<byte[]>, RuntimeException> call);
    }

    /**
     * Twelve threads apply the same three ids on {@link #inbox}, half of them joined in a
     * transaction {@code joined} opens, each returning a result of its own: every duplicate carries
     * exactly the result of the one call that applied the id, never none and never its own, and
     * only the winner's effect committed. Retryable failures are retried; any other fails the test.
     *
     * @param joined how the joined callers open their transaction
     * @throws Exception if a thread fails or does not finish in time; the test fails
     */
    protected final void assertEveryDuplicateCarriesTheWinnersResult(CallerTransaction joined) throws Exception {
        createEffectTable();
        JdbiInbox inbox = this.inbox;
        JdbiResultInbox<byte[]> results = inbox.storingResults(BYTES);
        int threads = 12;
        List<String> ids = List.of("a", "b", "c");
        CyclicBarrier start = new CyclicBarrier(threads);
        Map<String, byte[]> applied = new ConcurrentHashMap<>();
        Map<String, List<byte[]>> duplicates = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                String caller = "caller-" + t;
                boolean inCallersTransaction = t % 2 == 0;
                done.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    for (String id : ids) {
                        while (true) {
                            try {
                                Outcome<byte[]> outcome = inCallersTransaction
                                        ? joined.inTransaction(inbox, handle -> results.applyIn(handle, id,
                                                Content.of(1), tx -> effect(tx, id, caller)))
                                        : results.apply(id, Content.of(1), tx -> effect(tx, id, caller));
                                if (outcome instanceof Outcome.Applied<byte[]> first) {
                                    assertEquals(null, applied.putIfAbsent(id, first.result()), "one Applied for " + id);
                                } else {
                                    Outcome.Duplicate<byte[]> duplicate = assertInstanceOf(Outcome.Duplicate.class, outcome);
                                    assertTrue(duplicate.result().isDecoded(), "a duplicate carries the result");
                                    assertNotNull(duplicate.result().value(), "a duplicate carries the result");
                                    duplicates.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>())
                                            .add(duplicate.result().value());
                                }
                                break;
                            } catch (RuntimeException e) {
                                assertEquals(FailureKind.RETRYABLE, FailureKind.of(e), "only retryable failures: " + e);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : done) {
                future.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        for (String id : ids) {
            byte[] winner = applied.get(id);
            assertNotNull(winner, "one call applied " + id);
            assertEquals(threads - 1, duplicates.get(id).size());
            for (byte[] duplicate : duplicates.get(id)) {
                assertArrayEquals(winner, duplicate, "every duplicate of " + id + " carries the winner's result");
            }
            String winnerCaller = new String(winner, StandardCharsets.UTF_8).substring(id.length() + 1);
            assertEquals(List.of(winnerCaller), inbox.jdbi().withHandle(handle -> handle.createQuery(
                    "SELECT caller FROM effect WHERE id = ?").bind(0, id).mapTo(String.class).list()),
                    "the stored result is the one of the effect that committed");
        }
        assertEquals(ids.size(), effectRows());
    }

    @Test
    void theSameIdTwiceInOneBatchGivesTheSecondTheFirstsResult() {
        JdbiResultInbox<byte[]> results = inbox.storingResults(BYTES);
        AtomicInteger runs = new AtomicInteger();

        List<MessageResult<byte[]>> batch = results.applyAll(List.of(Message.of("x", Content.of(1)),
                Message.of("x", Content.of(1))), (tx, message) -> utf8("run-" + runs.incrementAndGet()));

        assertEquals(1, runs.get());
        assertArrayEquals(utf8("run-1"), assertInstanceOf(Outcome.Applied.class, batch.get(0).outcome().orElseThrow())
                .result() instanceof byte[] b ? b : null);
        Outcome.Duplicate<?> second = assertInstanceOf(Outcome.Duplicate.class, batch.get(1).outcome().orElseThrow());
        assertArrayEquals(utf8("run-1"), (byte[]) second.result().value());
    }

    /** Under group commit, one message whose codec, seal or size fails fails alone; the others keep their results. */
    @Test
    void underGroupCommitOnlyTheFailingMessageFailsAndTheOthersKeepTheirResults() {
        try (JdbiInbox group = fixture.builder().name("group").commitMode(CommitMode.GROUP).maxResultBytes(16)
                .build()) {
            ResultCodec<String> picky = new ResultCodec<>() {
                @Override
                public String type() {
                    return "orders.Text";
                }

                @Override
                public int version() {
                    return 0;
                }

                @Override
                public byte[] encode(String result) {
                    if (result.equals("throw")) {
                        throw new IllegalStateException("the codec refuses");
                    }
                    return utf8(result);
                }

                @Override
                public String decode(byte[] bytes, int version) {
                    return new String(bytes, StandardCharsets.UTF_8);
                }
            };
            ResultCodec<String> sealed = picky.sealedWith(new ResultSeal() {
                @Override
                public byte[] seal(byte[] encoded) {
                    if (new String(encoded, StandardCharsets.UTF_8).equals("unsealable")) {
                        throw new IllegalStateException("the seal refuses");
                    }
                    byte[] out = encoded.clone();
                    for (int i = 0; i < out.length; i++) {
                        out[i] ^= 0x5a;
                    }
                    return out;
                }

                @Override
                public byte[] open(byte[] stored) {
                    return seal(stored);
                }
            });
            JdbiResultInbox<String> results = group.storingResults(sealed);
            List<Message> messages = List.of(Message.of("m1", Content.of(1)), Message.of("m2", Content.of(2)),
                    Message.of("m3", Content.of(3)), Message.of("m4", Content.of(4)), Message.of("m5", Content.of(5)));
            List<String> answers = List.of("one", "throw", "a result far over sixteen bytes", "unsealable", "five");

            List<MessageResult<String>> batch = results.applyAll(messages,
                    (tx, message) -> answers.get(messages.indexOf(message)));

            assertEquals("one", ((Outcome.Applied<String>) batch.get(0).outcome().orElseThrow()).result());
            assertInstanceOf(IllegalStateException.class, batch.get(1).failure().orElseThrow());
            assertEquals(StoredResultException.Kind.TOO_LARGE,
                    assertInstanceOf(StoredResultException.class, batch.get(2).failure().orElseThrow()).kind());
            assertInstanceOf(IllegalStateException.class, batch.get(3).failure().orElseThrow());
            assertEquals("five", ((Outcome.Applied<String>) batch.get(4).outcome().orElseThrow()).result());
            for (String failed : List.of("m2", "m3", "m4")) {
                assertTrue(group.find(failed).isEmpty(), failed + " left nothing");
            }
            assertEquals("one", results.findResult("m1").orElseThrow().value());
            assertEquals("five", results.findResult("m5").orElseThrow().value());
            assertFalse(Arrays.equals(utf8("one"),
                    group.find("m1").orElseThrow().result().orElseThrow().bytes()), "the sealed form is stored");

            // The failed ones run again on retry.
            Outcome<String> retried = results.apply("m3", Content.of(3), tx -> "short");
            assertEquals("short", assertInstanceOf(Outcome.Applied.class, retried).result());
            assertEquals("one", results.apply("m1", Content.of(1), tx -> "again").fold(Outcome.Applied::result,
                    duplicate -> duplicate.result().value(), conflict -> null));
        }
    }

    @Test
    void anEmptyResultStaysEmptyAndIsNotANull() {
        JdbiResultInbox<byte[]> results = inbox.storingResults(BYTES);
        results.apply("e", Content.of(1), tx -> new byte[0]);

        Outcome<byte[]> again = results.apply("e", Content.of(1), tx -> utf8("not run"));

        StoredResult<byte[]> stored = assertInstanceOf(Outcome.Duplicate.class, again).result();
        assertNotNull(stored.value(), "an empty result is not a null");
        assertEquals(0, stored.value().length);
        assertFalse(inbox.find("e").orElseThrow().result().orElseThrow().isNull());
    }

    @Test
    void aCodecThatReturnsNullFailsTheCallAndTheRetryRunsAgain() {
        AtomicInteger runs = new AtomicInteger();
        ResultCodec<String> broken = new ResultCodec<>() {
            @Override
            public String type() {
                return "orders.Text";
            }

            @Override
            public int version() {
                return 1;
            }

            @Override
            public byte[] encode(String result) {
                return runs.get() == 1 ? null : utf8(result);
            }

            @Override
            public String decode(byte[] bytes, int version) {
                return new String(bytes, StandardCharsets.UTF_8);
            }
        };
        createEffectTable();

        assertThrows(RuntimeException.class, () -> inbox.storingResults(broken).apply("n", Content.of(1), tx -> {
            runs.incrementAndGet();
            effect(tx, "n", "first");
            return "first";
        }));
        assertTrue(inbox.find("n").isEmpty(), "nothing recorded");
        assertEquals(0, effectRows(), "the effect rolled back with it");

        Outcome<String> retry = inbox.storingResults(broken).apply("n", Content.of(1), tx -> {
            runs.incrementAndGet();
            return "second";
        });
        assertEquals("second", assertInstanceOf(Outcome.Applied.class, retry).result());
    }

    @Test
    void aPlainApplyOnAStoredResultSeesItsBytesAndAResultApplyOnAPlainRecordSeesNone() {
        inbox.storingResults(BYTES).apply("r", Content.of(1), tx -> new byte[] {9, 8, 7});
        inbox.apply("p", Content.of(1), tx -> 1);

        Outcome<Integer> plain = inbox.apply("r", Content.of(1), tx -> 2);
        StoredResult<Integer> seen = assertInstanceOf(Outcome.Duplicate.class, plain).result();
        assertFalse(seen.isDecoded());
        assertEquals(new EncodedResult("orders.Confirmation", 1, new byte[] {9, 8, 7}), seen.encoded().orElseThrow());
        assertThrows(IllegalStateException.class, seen::value);

        Outcome<byte[]> typed = inbox.storingResults(BYTES).apply("p", Content.of(1), tx -> new byte[] {1});
        assertEquals(StoredResult.none(), assertInstanceOf(Outcome.Duplicate.class, typed).result());
    }

    @Test
    void aResultOfAnotherTypeOrVersionIsRefusedAndNothingIsWritten() {
        inbox.storingResults(BYTES).apply("t", Content.of(1), tx -> new byte[] {1});
        EncodedResult before = inbox.find("t").orElseThrow().result().orElseThrow();

        StoredResultException otherType = assertThrows(StoredResultException.class, () -> inbox
                .storingResults(ResultCodec.bytes("orders.Confirmation ", 1)).apply("t", Content.of(1), tx -> new byte[0]));
        StoredResultException otherVersion = assertThrows(StoredResultException.class, () -> inbox
                .storingResults(ResultCodec.bytes("orders.Confirmation", 2)).apply("t", Content.of(1), tx -> new byte[0]));
        StoredResultException otherCase = assertThrows(StoredResultException.class, () -> inbox
                .storingResults(ResultCodec.bytes("orders.confirmation", 1)).findResult("t"));

        assertEquals(StoredResultException.Kind.OTHER_TYPE, otherType.kind());
        assertEquals(StoredResultException.Kind.UNSUPPORTED_VERSION, otherVersion.kind());
        assertEquals(StoredResultException.Kind.OTHER_TYPE, otherCase.kind());
        assertEquals(before, inbox.find("t").orElseThrow().result().orElseThrow());
    }

    @Test
    void unicodeTypeNamesOfTheLongestLengthAndVersionZeroRoundTrip() {
        String type = ("注文" + "\uD83D\uDCE6").repeat(25); // 100 UTF-16 units, 75 code points
        assertEquals(100, type.length());
        ResultCodec<byte[]> codec = ResultCodec.bytes(type, 0);
        inbox.storingResults(codec).apply("u", Content.of(1), tx -> new byte[] {5});

        Outcome<byte[]> again = inbox.storingResults(codec).apply("u", Content.of(1), tx -> new byte[] {6});

        assertArrayEquals(new byte[] {5}, assertInstanceOf(Outcome.Duplicate.class, again).result().value() instanceof byte[] b
                ? b : null);
        assertEquals(new EncodedResult(type, 0, new byte[] {5}), inbox.find("u").orElseThrow().result().orElseThrow());
    }

    @Test
    void aJoinedCallRolledBackByTheCallerLeavesNoResultAndTheRetryStoresItsOwn() {
        JdbiResultInbox<byte[]> results = inbox.storingResults(BYTES);
        try (Handle caller = inbox.jdbi().open()) {
            caller.begin();
            results.applyIn(caller, "j", Content.of(1), tx -> utf8("rolled back"));
            caller.rollback();
            caller.begin();
            caller.savepoint("mine");
            results.applyIn(caller, "j", Content.of(1), tx -> utf8("savepoint rolled back"));
            caller.rollbackToSavepoint("mine");
            Outcome<byte[]> kept = results.applyIn(caller, "j", Content.of(1), tx -> utf8("kept"));
            assertInstanceOf(Outcome.Applied.class, kept);
            Outcome<byte[]> nested = results.applyIn(caller, "j", Content.of(1), tx -> utf8("nested"));
            assertArrayEquals(utf8("kept"), (byte[]) assertInstanceOf(Outcome.Duplicate.class, nested).result().value(),
                    "a second joined call in the same transaction sees the uncommitted result");
            caller.commit();
        }

        assertArrayEquals(utf8("kept"), results.findResult("j").orElseThrow().value());
    }

    @Test
    void anEightMebibyteResultUnderGroupCommitRoundTripsAndFindAfterPurgeIsEmpty() {
        byte[] big = new byte[8 << 20];
        new Random(35).nextBytes(big);
        MutableClock clock = new MutableClock(T0);
        try (JdbiInbox group = fixture.builder().name("big").commitMode(CommitMode.GROUP).maxResultBytes(9 << 20)
                .clock(clock).retention(Duration.ofDays(1)).build()) {
            JdbiResultInbox<byte[]> results = group.storingResults(BYTES);
            results.apply("big", Content.of(1), tx -> big.clone());

            Outcome<byte[]> again = results.apply("big", Content.of(1), tx -> new byte[0]);

            assertArrayEquals(big, (byte[]) assertInstanceOf(Outcome.Duplicate.class, again).result().value());
            clock.advance(Duration.ofDays(2));
            assertEquals(1, group.retention().purge().rowsPurged());
            assertTrue(results.findResult("big").isEmpty());
            assertTrue(group.find("big").isEmpty());
        }
    }

    /** A codec that keeps the array it returns and changes it later: what is stored is what it returned then. */
    @Test
    void anArrayChangedAfterTheCallReturnsDoesNotChangeTheStoredResult() {
        byte[] shared = {1, 2, 3};
        ResultCodec<byte[]> identity = new ResultCodec<>() {
            @Override
            public String type() {
                return "orders.Shared";
            }

            @Override
            public int version() {
                return 1;
            }

            @Override
            public byte[] encode(byte[] result) {
                return result;
            }

            @Override
            public byte[] decode(byte[] bytes, int version) {
                return bytes;
            }
        };
        Outcome<byte[]> first = inbox.storingResults(identity).apply("s", Content.of(1), tx -> shared);
        shared[0] = 99;
        ((byte[]) ((Outcome.Applied<byte[]>) first).result())[1] = 98;

        Outcome<byte[]> again = inbox.storingResults(identity).apply("s", Content.of(1), tx -> new byte[0]);

        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) assertInstanceOf(Outcome.Duplicate.class, again).result().value());
    }
}
