package dev.idempotent.inbox.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.ForwardingInbox;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.ResultInbox;
import dev.idempotent.inbox.ResultSeal;
import dev.idempotent.inbox.StoredResult;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.testing.InMemoryDatabase;
import dev.idempotent.inbox.testing.InMemoryStore;
import dev.idempotent.inbox.testing.MutableClock;
import dev.idempotent.inbox.testing.TestInbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Stored results over the in-memory store: {@link Inbox#storingResults} stores what the effect
 * returned in the claim's transaction, and a retry's {@link Outcome.Duplicate} carries it back,
 * decoded; a result too large, or of another type or version, is refused by kind; per call, in a
 * batch, a group commit and a joined call.
 */
class InboxEngineResultsTest {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");

    private final InMemoryDatabase database = new InMemoryDatabase();
    private final MutableClock clock = new MutableClock(T0);
    private final List<Inbox<?>> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(Inbox::close);
    }

    private TestInbox inbox() {
        return track(TestInbox.builder(database).name("orders").clock(clock).build());
    }

    private <I extends Inbox<?>> I track(I inbox) {
        opened.add(inbox);
        return inbox;
    }

    /** Text in UTF-8, of type {@code type} version {@code version}. */
    static ResultCodec<String> text(String type, int version) {
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

    private static Effect<InMemoryStore.Tx, String, RuntimeException> book(String answer) {
        return tx -> {
            tx.add("booked", 1);
            return answer;
        };
    }

    @Test
    void aRetryGetsTheFirstAnswerDecodedAndFindReturnsItAsStored() {
        ResultInbox<InMemoryStore.Tx, String> orders = inbox().storingResults(text("orders.Confirmation", 1));
        Outcome<String> first = orders.apply("order-1", Content.of(1), book("booking 4711"));
        assertEquals("booking 4711", assertInstanceOf(Outcome.Applied.class, first).result());

        Outcome<String> retry = orders.apply("order-1", Content.of(1), book("booking 4712"));
        Outcome.Duplicate<String> duplicate = assertInstanceOf(Outcome.Duplicate.class, retry);
        assertTrue(duplicate.result().isDecoded());
        assertEquals("booking 4711", duplicate.result().value(), "the first answer, not the retry's");
        assertEquals(1, database.value("booked"), "the retry's effect did not run");

        EncodedResult stored = orders.inbox().find("order-1").orElseThrow().result().orElseThrow();
        assertEquals(new EncodedResult("orders.Confirmation", 1, "booking 4711".getBytes(StandardCharsets.UTF_8)),
                stored);
        assertEquals(Optional.of(StoredResult.decoded(stored, "booking 4711")), orders.findResult("order-1"));
        assertEquals(Optional.empty(), orders.findResult("order-2"), "never applied");
    }

    @Test
    void bytesRoundTripExactlyUpToARaisedLimitOfSeveralMegabytes() {
        int size = 8 << 20;
        TestInbox inbox = track(TestInbox.builder(database).name("files").maxResultBytes(size).build());
        ResultInbox<InMemoryStore.Tx, byte[]> files = inbox.storingResults(ResultCodec.bytes("files.Blob", 0));
        byte[] every = new byte[256];
        for (int i = 0; i < every.length; i++) {
            every[i] = (byte) i;
        }
        byte[] large = new byte[size];
        new Random(35).nextBytes(large);
        for (byte[] result : List.of(every, large, new byte[0])) {
            String id = "file-" + result.length;
            files.apply(id, Content.of(result.length), tx -> result.clone());
            Outcome.Duplicate<byte[]> duplicate = assertInstanceOf(Outcome.Duplicate.class,
                    files.apply(id, Content.of(result.length), tx -> new byte[] {1}));
            assertArrayEquals(result, duplicate.result().value(), id);
            assertArrayEquals(result, files.findResult(id).orElseThrow().value(), id);
        }
    }

    /**
     * Whatever bytes the first call returned, sealed or not, every later delivery of the id gets
     * exactly them back, and what is stored is what the codec chain returned.
     */
    @Test
    void everyRetryGetsExactlyTheFirstBytesWhateverTheyAre() {
        TestInbox inbox = inbox();
        ResultCodec<byte[]> plain = ResultCodec.bytes("blob", 3);
        ResultSeal flip = new ResultSeal() {
            @Override
            public byte[] seal(byte[] encoded) {
                byte[] sealed = encoded.clone();
                for (int i = 0; i < sealed.length; i++) {
                    sealed[i] = (byte) ~sealed[i];
                }
                return sealed;
            }

            @Override
            public byte[] open(byte[] sealed) {
                return seal(sealed);
            }
        };
        int[] ids = {0};
        qt().withExamples(200).forAll(
                lists().of(integers().between(-128, 127)).ofSizeBetween(0, 300),
                lists().of(integers().between(-128, 127)).ofSizeBetween(0, 20),
                booleans().all())
            .checkAssert((first, later, sealed) -> {
                byte[] firstBytes = bytes(first);
                ResultCodec<byte[]> codec = sealed ? plain.sealedWith(flip) : plain;
                ResultInbox<InMemoryStore.Tx, byte[]> view = inbox.storingResults(codec);
                String id = "blob-" + ids[0]++;
                view.apply(id, Content.of(id), tx -> firstBytes.clone());
                Outcome<byte[]> retry = view.apply(id, Content.of(id), tx -> bytes(later));
                assertArrayEquals(firstBytes, ((Outcome.Duplicate<byte[]>) retry).result().value());
                assertArrayEquals(codec.encode(firstBytes), inbox.find(id).orElseThrow().result().orElseThrow().bytes());
            });
    }

    private static byte[] bytes(List<Integer> values) {
        byte[] bytes = new byte[values.size()];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = values.get(i).byteValue();
        }
        return bytes;
    }

    @Test
    void aStoredNullIsNotTheSameAsNoResult() {
        TestInbox inbox = inbox();
        ResultInbox<InMemoryStore.Tx, String> orders = inbox.storingResults(text("orders.Confirmation", 1));
        orders.apply("with-null", Content.of(1), tx -> null);
        inbox.apply("plain", Content.of(2), tx -> "not stored");

        StoredResult<String> nullResult = ((Outcome.Duplicate<String>) orders.apply("with-null", Content.of(1),
                book("x"))).result();
        assertTrue(nullResult.isStored());
        assertTrue(nullResult.isDecoded());
        assertNull(nullResult.value());
        assertTrue(inbox.find("with-null").orElseThrow().result().orElseThrow().isNull());

        StoredResult<String> none = ((Outcome.Duplicate<String>) orders.apply("plain", Content.of(2), book("x")))
                .result();
        assertEquals(StoredResult.none(), none);
        assertFalse(none.isStored());
        assertThrows(IllegalStateException.class, none::value);
        assertEquals(Optional.of(StoredResult.none()), orders.findResult("plain"));
        assertEquals(Optional.empty(), inbox.find("plain").orElseThrow().result());
    }

    @Test
    void aCallWithoutACodecGetsTheStoredBytesUndecoded() {
        TestInbox inbox = inbox();
        inbox.storingResults(text("orders.Confirmation", 1)).apply("order-1", Content.of(1), book("booking 4711"));
        Outcome.Duplicate<Integer> duplicate = assertInstanceOf(Outcome.Duplicate.class,
                inbox.apply("order-1", Content.of(1), tx -> 0));
        assertTrue(duplicate.result().isStored());
        assertFalse(duplicate.result().isDecoded());
        assertArrayEquals("booking 4711".getBytes(StandardCharsets.UTF_8),
                duplicate.result().encoded().orElseThrow().bytes());
        assertThrows(IllegalStateException.class, () -> duplicate.result().value());
    }

    @Test
    void aResultOverTheLimitFailsTheCallWithNothingRecordedAndARetryApplies() {
        TestInbox inbox = track(TestInbox.builder(database).name("orders").maxResultBytes(10).build());
        ResultInbox<InMemoryStore.Tx, String> orders = inbox.storingResults(text("orders.Confirmation", 1));
        StoredResultException tooLarge = assertThrows(StoredResultException.class,
                () -> orders.apply("order-1", Content.of(1), book("an answer of 26 bytes here")));
        assertEquals(StoredResultException.Kind.TOO_LARGE, tooLarge.kind());
        assertFalse(tooLarge.getMessage().contains("answer"), tooLarge.getMessage());
        assertEquals(Optional.empty(), inbox.find("order-1"), "nothing recorded");
        assertEquals(0, database.value("booked"), "the effect's writes rolled back");

        assertInstanceOf(Outcome.Applied.class, orders.apply("order-1", Content.of(1), book("short")));
        assertEquals(1, database.value("booked"));
        assertEquals("short", orders.findResult("order-1").orElseThrow().value());
    }

    @Test
    void aResultExactlyAtTheLimitIsStored() {
        TestInbox inbox = track(TestInbox.builder(database).name("orders").maxResultBytes(5).build());
        ResultInbox<InMemoryStore.Tx, String> orders = inbox.storingResults(text("orders.Confirmation", 1));
        orders.apply("order-1", Content.of(1), book("12345"));
        assertEquals("12345", orders.findResult("order-1").orElseThrow().value());
    }

    @Test
    void aStoredResultOfAnotherVersionOrTypeIsRefusedByKindNeverMisread() {
        TestInbox inbox = inbox();
        inbox.storingResults(text("orders.Confirmation", 1)).apply("order-1", Content.of(1), book("v1 answer"));

        ResultInbox<InMemoryStore.Tx, String> v2 = inbox.storingResults(text("orders.Confirmation", 2));
        StoredResultException version = assertThrows(StoredResultException.class,
                () -> v2.apply("order-1", Content.of(1), book("x")));
        assertEquals(StoredResultException.Kind.UNSUPPORTED_VERSION, version.kind());
        assertFalse(version.getMessage().contains("v1 answer"));
        assertEquals(StoredResultException.Kind.UNSUPPORTED_VERSION,
                assertThrows(StoredResultException.class, () -> v2.findResult("order-1")).kind());

        ResultInbox<InMemoryStore.Tx, String> other = inbox.storingResults(text("orders.Invoice", 1));
        assertEquals(StoredResultException.Kind.OTHER_TYPE,
                assertThrows(StoredResultException.class, () -> other.apply("order-1", Content.of(1), book("x"))).kind());
        assertEquals(StoredResultException.Kind.OTHER_TYPE,
                assertThrows(StoredResultException.class, () -> other.findResult("order-1")).kind());

        ResultCodec<String> v2ReadingV1 = new DelegatingCodec(text("orders.Confirmation", 2)) {
            @Override
            public boolean decodes(int storedVersion) {
                return storedVersion == 1 || storedVersion == 2;
            }
        };
        assertEquals("v1 answer", ((Outcome.Duplicate<String>) inbox.storingResults(v2ReadingV1)
                .apply("order-1", Content.of(1), book("x"))).result().value());
        assertEquals(1, database.value("booked"), "no refusal ran or recorded anything");
        assertEquals(new EncodedResult("orders.Confirmation", 1, "v1 answer".getBytes(StandardCharsets.UTF_8)),
                inbox.find("order-1").orElseThrow().result().orElseThrow(), "the stored result is untouched");
    }

    @Test
    void aCodecThatCannotReadTheBytesIsReportedUnreadable() {
        TestInbox inbox = inbox();
        inbox.storingResults(text("orders.Confirmation", 1)).apply("order-1", Content.of(1), book("secret answer"));
        ResultCodec<String> broken = new DelegatingCodec(text("orders.Confirmation", 1)) {
            @Override
            public String decode(byte[] bytes, int storedVersion) {
                throw new IllegalArgumentException("bad bytes");
            }
        };
        StoredResultException unreadable = assertThrows(StoredResultException.class,
                () -> inbox.storingResults(broken).apply("order-1", Content.of(1), book("x")));
        assertEquals(StoredResultException.Kind.UNREADABLE, unreadable.kind());
        assertFalse(unreadable.getMessage().contains("secret"), unreadable.getMessage());
    }

    @Test
    void aBatchStoresEachResultAndAnOversizeMessageFailsAlone() {
        TestInbox inbox = track(TestInbox.builder(database).name("orders").maxResultBytes(8).build());
        ResultInbox<InMemoryStore.Tx, String> orders = inbox.storingResults(text("orders.Confirmation", 1));
        orders.apply("old", Content.of(0), book("old"));
        List<Message> batch = List.of(Message.of("a", Content.of(1)), Message.of("too-big", Content.of(2)),
                Message.of("old", Content.of(0)), Message.of("a", Content.of(1)));
        List<MessageResult<String>> results = orders.applyAll(batch, (tx, message) -> {
            tx.add("booked", 1);
            return message.id().equals("too-big") ? "more than eight bytes" : "for " + message.id();
        });
        assertEquals("for a", assertInstanceOf(Outcome.Applied.class, results.get(0).outcome().orElseThrow()).result());
        assertEquals(StoredResultException.Kind.TOO_LARGE,
                assertInstanceOf(StoredResultException.class, results.get(1).failure().orElseThrow()).kind());
        assertEquals("old", ((Outcome.Duplicate<String>) results.get(2).outcome().orElseThrow()).result().value());
        assertEquals("for a", ((Outcome.Duplicate<String>) results.get(3).outcome().orElseThrow()).result().value(),
                "a repeat in the batch carries its first occurrence's result");
        assertEquals(Optional.empty(), inbox.find("too-big"));
        assertEquals(2, database.value("booked"), "old, then a; too-big's write rolled back with its savepoint");
    }

    @Test
    void underGroupCommitADuplicateCarriesTheStoredResult() {
        TestInbox inbox = track(TestInbox.builderWithGroupCommit(database).name("orders").build());
        ResultInbox<InMemoryStore.Tx, String> orders = inbox.storingResults(text("orders.Confirmation", 1));
        orders.apply("order-1", Content.of(1), book("first"));
        assertEquals("first", ((Outcome.Duplicate<String>) orders.apply("order-1", Content.of(1), book("second")))
                .result().value());
        List<MessageResult<String>> batch = orders.applyAll(List.of(Message.of("order-1", Content.of(1))),
                (tx, message) -> "third");
        assertEquals("first", ((Outcome.Duplicate<String>) batch.get(0).outcome().orElseThrow()).result().value());
    }

    @Test
    void underGroupCommitAnOversizeResultFailsItsCallerAloneWithNothingRecorded() {
        TestInbox inbox = track(TestInbox.builderWithGroupCommit(database).name("orders").maxResultBytes(8).build());
        ResultInbox<InMemoryStore.Tx, String> orders = inbox.storingResults(text("orders.Confirmation", 1));
        assertEquals(StoredResultException.Kind.TOO_LARGE, assertThrows(StoredResultException.class,
                () -> orders.apply("order-1", Content.of(1), book("more than eight bytes"))).kind());
        assertEquals(Optional.empty(), inbox.find("order-1"));
        assertEquals(0, database.value("booked"));
        orders.apply("order-1", Content.of(1), book("short"));
        assertEquals("short", orders.findResult("order-1").orElseThrow().value());
        assertEquals(1, database.value("booked"));
    }

    @Test
    void aJoinedCallStoresItsResultWithTheCallersCommitAndAnOversizeOneLeavesTheCallerUsable() {
        TestInbox inbox = track(TestInbox.builder(database).name("orders").maxResultBytes(8).build());
        ResultInbox<InMemoryStore.Tx, String> orders = inbox.storingResults(text("orders.Confirmation", 1));
        StoreTransaction<InMemoryStore.Tx> caller = inbox.store().begin();
        PendingOutcome<String> applied = orders.applyJoined(caller.handle(), "order-1", Content.of(1), null,
                book("joined"));
        assertThrows(StoredResultException.class, () -> orders.applyJoined(caller.handle(), "order-2", Content.of(2),
                null, book("far too large")));
        caller.handle().add("audit", 1); // the caller's transaction is still usable
        caller.commit();
        applied.committed();
        assertEquals(1, database.value("booked"), "order-2's write went with its savepoint");
        assertEquals(1, database.value("audit"));
        assertEquals(Optional.empty(), inbox.find("order-2"));

        StoreTransaction<InMemoryStore.Tx> again = inbox.store().begin();
        PendingOutcome<String> duplicate = orders.applyJoined(again.handle(), "order-1", Content.of(1), null,
                book("other"));
        again.commit();
        assertEquals("joined", ((Outcome.Duplicate<String>) duplicate.committed()).result().value());
    }

    @Test
    void aPurgeRemovesTheResultWithItsRecord() {
        TestInbox inbox = track(TestInbox.builder(database).name("orders").clock(clock)
                .retention(Duration.ofDays(1)).build());
        ResultInbox<InMemoryStore.Tx, String> orders = inbox.storingResults(text("orders.Confirmation", 1));
        orders.apply("order-1", Content.of(1), book("first"));
        clock.advance(Duration.ofDays(2));
        inbox.retention().purge();
        assertEquals(Optional.empty(), orders.findResult("order-1"));
        assertEquals(Optional.empty(), inbox.find("order-1"));
    }

    @Test
    void aSealedCodecStoresWhatTheSealReturnedAndReadsTheValueBack() {
        TestInbox inbox = inbox();
        ResultSeal xor = new ResultSeal() {
            @Override
            public byte[] seal(byte[] encoded) {
                byte[] sealed = new byte[encoded.length + 1];
                sealed[0] = 42; // a key id, say
                for (int i = 0; i < encoded.length; i++) {
                    sealed[i + 1] = (byte) (encoded[i] ^ 0x5a);
                }
                return sealed;
            }

            @Override
            public byte[] open(byte[] sealed) {
                byte[] opened = new byte[sealed.length - 1];
                for (int i = 0; i < opened.length; i++) {
                    opened[i] = (byte) (sealed[i + 1] ^ 0x5a);
                }
                return opened;
            }
        };
        ResultCodec<String> plain = text("cards.Token", 1);
        ResultInbox<InMemoryStore.Tx, String> cards = inbox.storingResults(plain.sealedWith(xor));
        cards.apply("card-1", Content.of(1), tx -> "4111-token");

        byte[] stored = inbox.find("card-1").orElseThrow().result().orElseThrow().bytes();
        assertFalse(java.util.Arrays.equals(plain.encode("4111-token"), stored), "what is stored is sealed");
        assertArrayEquals(xor.seal(plain.encode("4111-token")), stored);
        assertEquals("4111-token", cards.findResult("card-1").orElseThrow().value());
        assertEquals("4111-token", ((Outcome.Duplicate<String>) cards.apply("card-1", Content.of(1), tx -> "x"))
                .result().value());
    }

    @Test
    void aForwardingInboxGivesItsDelegatesView() {
        TestInbox inner = inbox();
        Inbox<InMemoryStore.Tx> forwarding = new ForwardingInbox<>(inner) { };
        ResultInbox<InMemoryStore.Tx, String> orders = forwarding.storingResults(text("orders.Confirmation", 1));
        orders.apply("order-2", Content.of(2), book("kept"));
        assertEquals("kept", inner.storingResults(text("orders.Confirmation", 1)).findResult("order-2")
                .orElseThrow().value());
        assertEquals("kept", ((Outcome.Duplicate<String>) orders.apply("order-2", Content.of(2), book("x")))
                .result().value());
    }

    @Test
    void textsNeverCarryTheResult() {
        EncodedResult encoded = new EncodedResult("t", 1, "secret".getBytes(StandardCharsets.UTF_8));
        Outcome.Duplicate<String> duplicate = new Outcome.Duplicate<>("id", T0,
                Content.of(1).fingerprint(), StoredResult.decoded(encoded, "secret"));
        assertFalse(duplicate.toString().contains("secret"), duplicate.toString());
        assertFalse(encoded.toString().contains("secret"));
        assertEquals(new Outcome.Duplicate<String>("id", T0, Content.of(1).fingerprint()).result(), StoredResult.none());
    }

    @Test
    void badSettingsAndCodecsAreRefusedByName() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> TestInbox.builder(database).maxResultBytes(0));
        assertTrue(zero.getMessage().contains("maxResultBytes"));
        assertThrows(IllegalArgumentException.class,
                () -> TestInbox.builder(database).maxResultBytes(InboxSettings.MAX_RESULT_BYTES_LIMIT + 1));
        assertEquals(InboxSettings.DEFAULT_MAX_RESULT_BYTES,
                TestInbox.builder(database).settings().maxResultBytes());
        TestInbox inbox = inbox();
        assertThrows(IllegalArgumentException.class, () -> inbox.storingResults(text(" ", 1)));
        assertThrows(IllegalArgumentException.class, () -> inbox.storingResults(text("t", -1)));
        assertThrows(IllegalArgumentException.class, () -> inbox.storingResults(ResultCodec.bytes("x".repeat(101), 0)));
    }

    /** A codec that forwards to another, for tests that change one method. */
    private static class DelegatingCodec implements ResultCodec<String> {
        private final ResultCodec<String> delegate;

        DelegatingCodec(ResultCodec<String> delegate) {
            this.delegate = delegate;
        }

        @Override
        public String type() {
            return delegate.type();
        }

        @Override
        public int version() {
            return delegate.version();
        }

        @Override
        public byte[] encode(String result) {
            return delegate.encode(result);
        }

        @Override
        public String decode(byte[] bytes, int storedVersion) {
            return delegate.decode(bytes, storedVersion);
        }
    }
}
