package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.ResultSeal;
import dev.idempotent.inbox.StoredResult;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.jdbi.JdbiResultInbox;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract of stored results ({@link dev.idempotent.inbox.Inbox#storingResults}) every Jdbi
 * adapter passes against a real database: results round-trip exactly (text, every byte value, a
 * multi-megabyte result under a raised limit); a stored {@code null} is not "no result"; a result
 * over the limit is refused with nothing recorded and a retry applies; a result of another codec
 * version or type is refused by kind, on a duplicate and on a find; duplicates in a batch, under
 * group commit and in joined calls carry the stored result; {@code find} returns it as stored; a
 * purge removes it; a sealed codec stores what its seal returned. Subclass it in the adapter's
 * tests and implement {@link #openFixture()}.
 */
public abstract class ResultContract {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");
    private static final long WAIT_SECONDS = 60;
    private static final ResultCodec<String> CONFIRMATION = text("orders.Confirmation", 1);

    /** The fixture of the running test, for subclasses' own scenarios. */
    protected InboxFixture fixture;
    private final List<JdbiInbox> opened = new ArrayList<>();
    private final MutableClock clock = new MutableClock(T0);
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
    }

    @AfterEach
    void closeDatabase() {
        opened.forEach(JdbiInbox::close);
        fixture.close();
    }

    private JdbiInbox inbox(UnaryOperator<InboxBuilder<? extends JdbiInbox>> settings) {
        JdbiInbox inbox = settings.apply(fixture.builder().name("orders").clock(clock)).build();
        opened.add(inbox);
        return inbox;
    }

    private JdbiInbox inbox() {
        return inbox(builder -> builder);
    }

    /** Text in UTF-8 of type {@code type}, version {@code version}, reading only its own version. */
    private static ResultCodec<String> text(String type, int version) {
        return new ResultCodec<>() {
            @Override
            public String type() {
                return type;
            }

            @Override
            public int version() {
                return version;
            }

            @Override
            public byte[] encode(String result) {
                return result.getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public String decode(byte[] bytes, int storedVersion) {
                return new String(bytes, StandardCharsets.UTF_8);
            }
        };
    }

    /** Books one unit of stock and answers {@code answer}. */
    private Effect<Handle, String, RuntimeException> book(String answer) {
        return tx -> {
            stock.add(tx, 1);
            return answer;
        };
    }

    /** The decoded result a duplicate carries; fails the test for another outcome. */
    @SuppressWarnings("unchecked")
    private static <R> R storedValue(Outcome<R> outcome) {
        assertInstanceOf(Outcome.Duplicate.class, outcome, outcome.toString());
        return ((Outcome.Duplicate<R>) outcome).result().value();
    }

    @Test
    void textAndEveryByteValueRoundTripExactly() {
        JdbiInbox inbox = inbox();
        JdbiResultInbox<String> orders = inbox.storingResults(CONFIRMATION);
        String text = "Bestätigung 4711 \u2713 \uD83D\uDCE6 \"quoted\" \\ '";
        assertEquals(text, assertInstanceOf(Outcome.Applied.class, orders.apply("text", Content.of(1), book(text)))
                .result());
        assertEquals(text, storedValue(orders.apply("text", Content.of(1), book("other"))));

        JdbiResultInbox<byte[]> files = inbox.storingResults(ResultCodec.bytes("files.Blob", 0));
        byte[] every = new byte[512];
        for (int i = 0; i < every.length; i++) {
            every[i] = (byte) i;
        }
        for (byte[] result : List.of(every, new byte[0])) {
            String id = "bytes-" + result.length;
            files.apply(id, Content.of(id), tx -> result.clone());
            assertArrayEquals(result, storedValue(files.apply(id, Content.of(id), tx -> new byte[] {7})), id);
            assertArrayEquals(result, files.findResult(id).orElseThrow().value(), id);
        }
        assertEquals(1, stock.total(), "each effect ran once");
    }

    @Test
    void aMultiMegabyteResultRoundTripsUnderARaisedLimit() {
        int size = 8 << 20;
        JdbiResultInbox<byte[]> files = inbox(builder -> builder.maxResultBytes(size))
                .storingResults(ResultCodec.bytes("files.Blob", 0));
        byte[] large = new byte[size];
        new Random(35).nextBytes(large);
        files.apply("large", Content.of(1), tx -> large.clone());
        assertArrayEquals(large, storedValue(files.apply("large", Content.of(1), tx -> new byte[0])));
        assertArrayEquals(large, files.inbox().find("large").orElseThrow().result().orElseThrow().bytes());
    }

    @Test
    void aStoredNullIsNotNoResult() {
        JdbiInbox inbox = inbox();
        JdbiResultInbox<String> orders = inbox.storingResults(CONFIRMATION);
        orders.apply("null", Content.of(1), tx -> null);
        inbox.apply("plain", Content.of(2), tx -> "not stored");

        StoredResult<String> stored = ((Outcome.Duplicate<String>) orders.apply("null", Content.of(1), book("x")))
                .result();
        assertTrue(stored.isStored());
        assertNull(stored.value());
        assertEquals(new EncodedResult("orders.Confirmation", 1, null),
                inbox.find("null").orElseThrow().result().orElseThrow());

        assertEquals(StoredResult.none(),
                ((Outcome.Duplicate<String>) orders.apply("plain", Content.of(2), book("x"))).result());
        assertEquals(Optional.empty(), inbox.find("plain").orElseThrow().result());
        assertEquals(Optional.of(StoredResult.none()), orders.findResult("plain"));
        assertEquals(Optional.empty(), orders.findResult("never"));
    }

    @Test
    void aResultOverTheLimitIsRefusedWithNothingRecordedAndARetryApplies() {
        JdbiInbox inbox = inbox(builder -> builder.maxResultBytes(16));
        JdbiResultInbox<String> orders = inbox.storingResults(CONFIRMATION);
        StoredResultException refused = assertThrows(StoredResultException.class,
                () -> orders.apply("order-1", Content.of(1), book("an answer longer than sixteen bytes")));
        assertEquals(StoredResultException.Kind.TOO_LARGE, refused.kind());
        assertEquals(Optional.empty(), inbox.find("order-1"), "nothing recorded");
        assertEquals(0, stock.total(), "the effect's write rolled back");

        assertInstanceOf(Outcome.Applied.class, orders.apply("order-1", Content.of(1), book("short")));
        assertEquals(1, stock.total());
        assertEquals("short", orders.findResult("order-1").orElseThrow().value());
    }

    @Test
    void aResultOfAnotherVersionOrTypeIsRefusedByKindAndLeftAsStored() {
        JdbiInbox inbox = inbox();
        inbox.storingResults(CONFIRMATION).apply("order-1", Content.of(1), book("v1"));
        EncodedResult stored = inbox.find("order-1").orElseThrow().result().orElseThrow();

        JdbiResultInbox<String> v2 = inbox.storingResults(text("orders.Confirmation", 2));
        assertEquals(StoredResultException.Kind.UNSUPPORTED_VERSION, assertThrows(StoredResultException.class,
                () -> v2.apply("order-1", Content.of(1), book("x"))).kind());
        assertEquals(StoredResultException.Kind.UNSUPPORTED_VERSION,
                assertThrows(StoredResultException.class, () -> v2.findResult("order-1")).kind());
        JdbiResultInbox<String> invoice = inbox.storingResults(text("orders.Invoice", 1));
        assertEquals(StoredResultException.Kind.OTHER_TYPE, assertThrows(StoredResultException.class,
                () -> invoice.apply("order-1", Content.of(1), book("x"))).kind());
        assertEquals(StoredResultException.Kind.OTHER_TYPE,
                assertThrows(StoredResultException.class, () -> invoice.findResult("order-1")).kind());

        assertEquals(stored, inbox.find("order-1").orElseThrow().result().orElseThrow());
        assertEquals(1, stock.total());
    }

    @Test
    void aBatchStoresEachResultAndAnOversizeMessageFailsAlone() {
        JdbiResultInbox<String> orders = inbox(builder -> builder.maxResultBytes(8)).storingResults(CONFIRMATION);
        orders.apply("old", Content.of(0), book("old"));
        List<MessageResult<String>> results = orders.applyAll(List.of(Message.of("a", Content.of(1)),
                Message.of("too-big", Content.of(2)), Message.of("old", Content.of(0)), Message.of("a", Content.of(1))),
                (tx, message) -> {
                    stock.add(tx, 1);
                    return message.id().equals("too-big") ? "more than eight bytes" : "for " + message.id();
                });
        assertEquals("for a", assertInstanceOf(Outcome.Applied.class, results.get(0).outcome().orElseThrow()).result());
        assertEquals(StoredResultException.Kind.TOO_LARGE,
                assertInstanceOf(StoredResultException.class, results.get(1).failure().orElseThrow()).kind());
        assertEquals("old", storedValue(results.get(2).outcome().orElseThrow()));
        assertEquals("for a", storedValue(results.get(3).outcome().orElseThrow()));
        assertEquals(Optional.empty(), orders.inbox().find("too-big"));
        assertEquals(2, stock.total(), "old and a; too-big's write went with its savepoint");
    }

    @Test
    void underGroupCommitConcurrentDuplicatesCarryTheOneStoredResult() throws Exception {
        JdbiResultInbox<String> orders = inbox(builder -> builder.commitMode(CommitMode.GROUP))
                .storingResults(CONFIRMATION);
        int callers = 6;
        CyclicBarrier start = new CyclicBarrier(callers);
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            List<Future<Outcome<String>>> futures = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                String answer = "answer-" + i;
                futures.add(pool.submit(() -> {
                    start.await(WAIT_SECONDS, TimeUnit.SECONDS);
                    return orders.apply("order-1", Content.of(1), book(answer));
                }));
            }
            List<Outcome<String>> outcomes = new ArrayList<>();
            for (Future<Outcome<String>> future : futures) {
                outcomes.add(future.get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            List<Outcome.Applied<String>> applied = outcomes.stream().filter(Outcome.Applied.class::isInstance)
                    .map(outcome -> (Outcome.Applied<String>) outcome).toList();
            assertEquals(1, applied.size(), outcomes.toString());
            for (Outcome<String> outcome : outcomes) {
                if (!outcome.isNewlyApplied()) {
                    assertEquals(applied.get(0).result(), storedValue(outcome));
                }
            }
            assertEquals(1, stock.total());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void joinedCallsStoreTheResultWithTheCallersCommitAndCarryItOnADuplicate() throws Exception {
        JdbiResultInbox<String> orders = inbox(builder -> builder.maxResultBytes(8)).storingResults(CONFIRMATION);
        Outcome<String> applied = fixture.jdbi().inTransaction(handle -> {
            Outcome<String> outcome = orders.applyIn(handle, "order-1", Content.of(1), book("joined"));
            StoredResultException tooLarge = assertThrows(StoredResultException.class,
                    () -> orders.applyIn(handle, "order-2", Content.of(2), book("more than eight bytes")));
            assertEquals(StoredResultException.Kind.TOO_LARGE, tooLarge.kind());
            stock.add(handle, 10); // the caller's transaction is still usable
            return outcome;
        });
        assertEquals("joined", assertInstanceOf(Outcome.Applied.class, applied).result());
        assertEquals(11, stock.total(), "order-1's write and the caller's own; not order-2's");
        assertEquals(Optional.empty(), orders.inbox().find("order-2"));

        try (Handle handle = fixture.jdbi().open()) {
            handle.begin();
            assertInstanceOf(Outcome.Applied.class, orders.applyIn(handle, "order-3", Content.of(3), book("gone")));
            handle.rollback();
        }
        assertEquals(Optional.empty(), orders.findResult("order-3"), "rolled back with the caller");

        try (Handle handle = fixture.jdbi().open()) {
            Connection connection = handle.getConnection();
            connection.setAutoCommit(false);
            PendingOutcome<String> pending = orders.applyIn(connection, "order-1", Content.of(1), book("other"));
            connection.commit();
            connection.setAutoCommit(true);
            assertEquals("joined", storedValue(pending.committed()));
        }
    }

    @Test
    void findReturnsTheResultAsStoredAndAPurgeRemovesIt() {
        Duration retention = Duration.ofDays(1);
        JdbiInbox inbox = inbox(builder -> builder.retention(retention));
        JdbiResultInbox<String> orders = inbox.storingResults(CONFIRMATION);
        orders.apply("order-1", Content.of(1), book("first"));
        assertEquals(new EncodedResult("orders.Confirmation", 1, "first".getBytes(StandardCharsets.UTF_8)),
                inbox.find("order-1").orElseThrow().result().orElseThrow());

        clock.advance(retention.multipliedBy(2));
        inbox.retention().purge();
        assertEquals(Optional.empty(), inbox.find("order-1"));
        assertEquals(Optional.empty(), orders.findResult("order-1"));
    }

    @Test
    void aSealedCodecStoresWhatTheSealReturnedAndReadsTheValueBack() {
        JdbiInbox inbox = inbox();
        ResultSeal reversing = new ResultSeal() {
            @Override
            public byte[] seal(byte[] encoded) {
                byte[] sealed = new byte[encoded.length + 1];
                sealed[0] = 1; // the key's id
                for (int i = 0; i < encoded.length; i++) {
                    sealed[encoded.length - i] = (byte) ~encoded[i];
                }
                return sealed;
            }

            @Override
            public byte[] open(byte[] sealed) {
                byte[] opened = new byte[sealed.length - 1];
                for (int i = 0; i < opened.length; i++) {
                    opened[i] = (byte) ~sealed[opened.length - i];
                }
                return opened;
            }
        };
        JdbiResultInbox<String> cards = inbox.storingResults(CONFIRMATION.sealedWith(reversing));
        cards.apply("card-1", Content.of(1), tx -> "token 4111");

        byte[] stored = inbox.find("card-1").orElseThrow().result().orElseThrow().bytes();
        byte[] plain = CONFIRMATION.encode("token 4111");
        assertFalse(Arrays.equals(plain, stored), "the stored form is the sealed one");
        assertArrayEquals(reversing.seal(plain), stored);
        assertEquals("token 4111", cards.findResult("card-1").orElseThrow().value());
        assertEquals("token 4111", storedValue(cards.apply("card-1", Content.of(1), tx -> "x")));
    }
}
