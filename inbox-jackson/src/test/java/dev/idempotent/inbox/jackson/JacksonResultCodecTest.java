package dev.idempotent.inbox.jackson;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.ResultInbox;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Jackson codec on its own, and through a real SQLite inbox that stores results. */
class JacksonResultCodecTest {

    /** What a booking answers. */
    record Confirmation(String booking, int qty) {}

    /** The same, a version later, with a property older results lack. */
    record ConfirmationV2(String booking, int qty, String note) {}

    private final ObjectMapper mapper = new ObjectMapper();

    @TempDir
    Path directory;

    private SqliteInbox inbox;

    @BeforeEach
    void open() {
        inbox = SqliteInbox.builder(directory.resolve("inbox.db")).name("orders").build();
    }

    @AfterEach
    void close() {
        inbox.close();
    }

    @Test
    void aRetryGetsTheFirstConfirmationBackAsARecord() {
        ResultInbox<Handle, Confirmation> orders =
                inbox.storingResults(JacksonResultCodec.of(mapper, Confirmation.class, "orders.Confirmation", 1));
        orders.apply("order-1", Content.of(3), tx -> new Confirmation("B-4711", 3));
        Outcome<Confirmation> retry = orders.apply("order-1", Content.of(3), tx -> new Confirmation("B-9999", 3));
        assertEquals(new Confirmation("B-4711", 3),
                assertInstanceOf(Outcome.Duplicate.class, retry).result().value());
        assertEquals("{\"booking\":\"B-4711\",\"qty\":3}", new String(
                inbox.find("order-1").orElseThrow().result().orElseThrow().bytes(), StandardCharsets.UTF_8));
    }

    @Test
    void aGenericTypeRoundTripsThroughATypeReference() {
        JacksonResultCodec<List<Confirmation>> codec = JacksonResultCodec.of(mapper,
                new TypeReference<List<Confirmation>>() { }, "orders.Confirmations", 1);
        List<Confirmation> bookings = List.of(new Confirmation("B-1", 1), new Confirmation("B-2", 2));
        assertEquals(bookings, codec.decode(codec.encode(bookings), 1));
        assertInstanceOf(Confirmation.class, codec.decode(codec.encode(bookings), 1).get(0));
    }

    @Test
    void anOlderVersionIsReadOnlyWhenTheCodecSaysItCan() {
        inbox.storingResults(JacksonResultCodec.of(mapper, Confirmation.class, "orders.Confirmation", 1))
                .apply("order-1", Content.of(3), tx -> new Confirmation("B-4711", 3));
        JacksonResultCodec<ConfirmationV2> v2 = JacksonResultCodec.of(mapper, ConfirmationV2.class,
                "orders.Confirmation", 2);
        assertEquals(StoredResultException.Kind.UNSUPPORTED_VERSION,
                assertThrows(StoredResultException.class, () -> inbox.storingResults(v2).findResult("order-1")).kind());
        assertEquals(new ConfirmationV2("B-4711", 3, null),
                inbox.storingResults(v2.alsoDecoding(1)).findResult("order-1").orElseThrow().value());
    }

    @Test
    void jsonThatDoesNotReadAsTheTypeIsUnreadableAndTheMessageQuotesNothing() {
        ResultInbox<Handle, ConfirmationV2> v2 = inbox.storingResults(
                JacksonResultCodec.of(mapper, ConfirmationV2.class, "orders.Confirmation", 2));
        v2.apply("order-1", Content.of(3), tx -> new ConfirmationV2("B-4711", 3, "secret-note"));
        JacksonResultCodec<Confirmation> readsV2WithoutNote =
                JacksonResultCodec.of(mapper, Confirmation.class, "orders.Confirmation", 1).alsoDecoding(2);
        StoredResultException unreadable = assertThrows(StoredResultException.class,
                () -> inbox.storingResults(readsV2WithoutNote).findResult("order-1"));
        assertEquals(StoredResultException.Kind.UNREADABLE, unreadable.kind());
        String all = unreadable.getMessage() + " " + unreadable.getCause().getMessage();
        assertFalse(all.contains("secret") || all.contains("B-4711") || all.contains("note"), all);
        assertTrue(unreadable.getCause().getMessage().contains("line 1"), unreadable.getCause().getMessage());
    }

    @Test
    void badNamesAndVersionsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> JacksonResultCodec.of(mapper, Confirmation.class, " ", 1));
        assertThrows(IllegalArgumentException.class, () -> JacksonResultCodec.of(mapper, Confirmation.class, "t", -1));
        assertEquals("JacksonResultCodec[t v1]", JacksonResultCodec.of(mapper, Confirmation.class, "t", 1).toString());
    }
}
