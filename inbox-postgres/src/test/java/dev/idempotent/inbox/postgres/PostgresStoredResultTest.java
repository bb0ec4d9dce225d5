package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.ContentType;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.ResultInbox;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The store's side of stored results on PostgreSQL, on the fixture's renamed tables: a result
 * stored in the transaction that claimed the id reads back exactly, in the own and in a joined
 * transaction, a stored {@code null} stays one, a record without one reads as empty, and a purge
 * takes the result with the row.
 *
 * <p>The result's {@code UPDATE} travels in the round trip of the {@code COMMIT} or of the
 * savepoint's release behind it; when it fails there (a row that is not there to take it, a value
 * the table refuses) nothing behind it runs: the call fails definitely and nothing of the message
 * commits. Only a connection lost during that round trip leaves the outcome unknown.
 */
class PostgresStoredResultTest {

    private static final String INBOX = "orders";
    private static final Instant RECEIVED = Instant.parse("2026-01-05T10:00:00Z");

    private PostgresFixture fixture;
    private PostgresStore store;

    @BeforeEach
    void open() {
        fixture = new PostgresFixture();
        store = new PostgresStore(fixture.jdbi(), Duration.ofSeconds(10), SchemaMode.VALIDATE, fixture.tables());
    }

    @AfterEach
    void close() {
        store.close();
        fixture.close();
    }

    private static Fingerprint fingerprint(String id) {
        byte[] digest = new byte[32];
        digest[0] = (byte) id.hashCode();
        return new Fingerprint(1, new ContentType("inbox.int64", 1), digest);
    }

    /** Claims {@code id} in a transaction of the store's own, stores {@code result} unless null, commits. */
    private void apply(String id, EncodedResult result) {
        StoreTransaction<Handle> tx = store.begin();
        try {
            assertTrue(tx.claim(INBOX, id, fingerprint(id), Content.of(7), RECEIVED).isEmpty(), "a new id");
            tx.handle();
            if (result != null) {
                tx.storeResult(INBOX, id, result);
            }
            tx.commit();
        } catch (RuntimeException e) {
            tx.rollback();
            throw e;
        }
    }

    private EncodedResult stored(String id) {
        return store.find(INBOX, id).orElseThrow().result().orElse(null);
    }

    @Test
    void resultBytesRoundTrip() {
        byte[] bytes = {0, 1, (byte) 0xff, 0x27, 0x3b, 0};

        apply("order-1", new EncodedResult("orders.Confirmation", 3, bytes));

        EncodedResult read = stored("order-1");
        assertEquals("orders.Confirmation", read.type());
        assertEquals(3, read.version());
        assertArrayEquals(bytes, read.bytes());
    }

    @Test
    void aStoredNullIsATypeWithoutBytesAndNotNoResult() {
        apply("order-1", new EncodedResult("orders.Confirmation", 1, null));
        apply("order-2", null);

        EncodedResult read = stored("order-1");
        assertTrue(read.isNull());
        assertEquals(new EncodedResult("orders.Confirmation", 1, null), read);
        assertEquals(Optional.empty(), store.find(INBOX, "order-2").orElseThrow().result(), "no result stored");
    }

    @Test
    void anEightMebibyteResultRoundTrips() {
        byte[] bytes = new byte[8 * 1024 * 1024];
        new Random(35).nextBytes(bytes);

        apply("order-1", new EncodedResult("orders.Report", 1, bytes));

        assertArrayEquals(bytes, stored("order-1").bytes());
    }

    @Test
    void theClaimsReadBackOfADuplicateCarriesTheStoredResult() {
        EncodedResult result = new EncodedResult("orders.Confirmation", 1, new byte[] {42});
        apply("order-1", result);

        StoreTransaction<Handle> tx = store.begin();
        try {
            Optional<InboxRecord> existing = tx.claim(INBOX, "order-1", fingerprint("order-1"), Content.of(7), RECEIVED);
            assertEquals(Optional.of(result), existing.orElseThrow().result());
        } finally {
            tx.rollback();
        }
    }

    @Test
    void aResultStoredInAJoinedCallCommitsWithTheCallersTransaction() {
        EncodedResult result = new EncodedResult("orders.Confirmation", 2, new byte[] {1, 2, 3});
        try (Handle caller = fixture.jdbi().open()) {
            caller.begin();
            StoreTransaction<Handle> tx = store.join(caller);
            tx.savepoint();
            assertTrue(tx.claim(INBOX, "order-1", fingerprint("order-1"), Content.of(7), RECEIVED).isEmpty());
            tx.handle();
            tx.storeResult(INBOX, "order-1", result);
            tx.releaseSavepoint();
            assertTrue(store.find(INBOX, "order-1").isEmpty(), "nothing is visible before the caller commits");
            caller.commit();
        }

        assertEquals(result, stored("order-1"));
    }

    @Test
    void aResultRolledBackWithTheJoinedCallsSavepointLeavesNothing() {
        try (Handle caller = fixture.jdbi().open()) {
            caller.begin();
            StoreTransaction<Handle> tx = store.join(caller);
            tx.savepoint();
            tx.claim(INBOX, "order-1", fingerprint("order-1"), Content.of(7), RECEIVED);
            tx.handle();
            tx.storeResult(INBOX, "order-1", new EncodedResult("orders.Confirmation", 1, new byte[] {1}));
            tx.rollbackToSavepoint();
            caller.commit();
        }

        assertTrue(store.find(INBOX, "order-1").isEmpty());
    }

    @Test
    void aPurgeRemovesTheRowWithItsResult() {
        apply("order-1", new EncodedResult("orders.Confirmation", 1, new byte[1024]));
        Instant cutoff = RECEIVED.plusSeconds(1);

        StoreTransaction<Handle> tx = store.begin();
        tx.raiseHorizon(INBOX, cutoff);
        PurgeBatch batch = tx.deleteOldest(INBOX, cutoff, null, 10);
        tx.commit();

        assertEquals(1, batch.deleted());
        assertTrue(store.find(INBOX, "order-1").isEmpty());
        assertNull(fixture.jdbi().withHandle(handle -> handle.createQuery("SELECT max(length(result)) FROM "
                + fixture.tables().messageTable()).mapTo(Integer.class).one()), "no result is left in the table");
    }

    /** What an effect does that catches a failed statement and goes on. */
    private static void failAndGoOn(Handle handle) {
        assertThrows(JdbiException.class, () -> handle.execute("SELECT * FROM no_such_table"));
    }

    @Test
    void aResultAfterAnEffectThatLeftTheTransactionAbortedIsRefusedAndNothingIsRecorded() {
        StoreTransaction<Handle> tx = store.begin();
        try {
            tx.claim(INBOX, "order-1", fingerprint("order-1"), Content.of(7), RECEIVED);
            failAndGoOn(tx.handle());
            EncodedResult result = new EncodedResult("orders.Confirmation", 1, new byte[] {1});
            assertThrows(EffectBrokeTransactionException.class, () -> tx.storeResult(INBOX, "order-1", result));
        } finally {
            tx.rollback();
        }

        assertTrue(store.find(INBOX, "order-1").isEmpty());
    }

    @Test
    void aJoinedResultAfterAnEffectThatLeftTheTransactionAbortedIsRefusedAndTheCallerGoesOn() {
        try (Handle caller = fixture.jdbi().open()) {
            caller.begin();
            StoreTransaction<Handle> tx = store.join(caller);
            tx.savepoint();
            tx.claim(INBOX, "order-1", fingerprint("order-1"), Content.of(7), RECEIVED);
            failAndGoOn(tx.handle());
            EncodedResult result = new EncodedResult("orders.Confirmation", 1, new byte[] {1});
            assertThrows(EffectBrokeTransactionException.class, () -> tx.storeResult(INBOX, "order-1", result));
            tx.rollbackToSavepoint();
            assertEquals(1, caller.createQuery("SELECT 1").mapTo(Integer.class).one(), "the caller's transaction is usable");
            caller.commit();
        }

        assertTrue(store.find(INBOX, "order-1").isEmpty());
    }

    /** The inbox's rows of {@code id}, read past the store. */
    private int rows(String id) {
        return fixture.jdbi().withHandle(handle -> handle.createQuery("SELECT count(*) FROM "
                + fixture.tables().messageTable() + " WHERE id = :id").bind("id", id).mapTo(Integer.class).one());
    }

    /** A table the effects write to, beside the inbox's, to tell whether their writes committed. */
    private void createEffects() {
        fixture.jdbi().useHandle(handle -> handle.execute("CREATE TABLE effects (id TEXT PRIMARY KEY)"));
    }

    private int effects() {
        return fixture.jdbi().withHandle(handle -> handle.createQuery("SELECT count(*) FROM effects")
                .mapTo(Integer.class).one());
    }

    /** Makes the message table refuse results of type {@code orders.Refused}, as a column refuses a value. */
    private void refuseType() {
        fixture.jdbi().useHandle(handle -> handle.execute("ALTER TABLE " + fixture.tables().messageTable()
                + " ADD CONSTRAINT refuses_a_type CHECK (result_type <> 'orders.Refused')"));
    }

    private static ResultInbox<Handle, byte[]> storing(PostgresInbox inbox, String type) {
        return inbox.storingResults(ResultCodec.bytes(type, 1));
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aRowDeletedUnderTheResultFailsTheCallAtTheCommitAndCommitsNothing() {
        createEffects();
        try (PostgresInbox inbox = fixture.builder().name(INBOX).build()) {
            ResultInbox<Handle, byte[]> orders = storing(inbox, "orders.Confirmation");

            InboxStorageException failure = assertThrows(InboxStorageException.class, () -> orders.apply("order-1",
                    Content.of(7), tx -> {
                        tx.execute("INSERT INTO effects VALUES ('order-1')");
                        tx.execute("DELETE FROM " + fixture.tables().messageTable() + " WHERE id = 'order-1'");
                        return new byte[] {1};
                    }));

            // A storage failure, which is definite, not an OutcomeUnknownException.
            assertTrue(failure.getMessage().contains("found no row of the id"), failure.getMessage());
            assertEquals(0, effects(), "the effect's write did not commit");
            assertTrue(inbox.find("order-1").isEmpty());
            Outcome<byte[]> retry = orders.apply("order-1", Content.of(7), tx -> new byte[] {2});
            assertInstanceOf(Outcome.Applied.class, retry, "the retry runs again");
            assertArrayEquals(new byte[] {2}, stored("order-1").bytes());
        }
    }

    @Test
    void aResultTheTableRefusesFailsTheCallAtTheCommitAndCommitsNothing() {
        createEffects();
        refuseType();
        try (PostgresInbox inbox = fixture.builder().name(INBOX).build()) {
            InboxStorageException failure = assertThrows(InboxStorageException.class, () -> storing(inbox,
                    "orders.Refused").apply("order-1", Content.of(7), tx -> {
                        tx.execute("INSERT INTO effects VALUES ('order-1')");
                        return new byte[] {1};
                    }));

            assertEquals("23514", PostgresErrors.sqlState(failure), "the table's refusal is the cause");
            assertEquals(0, effects());
            assertEquals(0, rows("order-1"));
            // The connection went back to the pool usable, and the inbox goes on.
            assertInstanceOf(Outcome.Applied.class, storing(inbox, "orders.Confirmation")
                    .apply("order-2", Content.of(7), tx -> new byte[] {2}));
            assertEquals(new EncodedResult("orders.Confirmation", 1, new byte[] {2}), stored("order-2"));
        }
    }

    @Test
    void aTypeNameTheColumnCannotHoldFailsTheCommitDefinitely() {
        // PostgreSQL's text refuses the NUL character, which a type name may otherwise contain.
        EncodedResult result = new EncodedResult("orders.\0Confirmation", 1, new byte[] {1});
        StoreTransaction<Handle> tx = store.begin();
        try {
            tx.claim(INBOX, "order-1", fingerprint("order-1"), Content.of(7), RECEIVED);
            tx.handle();
            tx.storeResult(INBOX, "order-1", result);
            RuntimeException failure = assertThrows(RuntimeException.class, tx::commit);
            assertFalse(failure instanceof OutcomeUnknownException, "a definite failure: " + failure);
        } finally {
            tx.rollback();
        }

        assertEquals(0, rows("order-1"));
    }

    @Test
    void aResultThatFailsInABatchFailsItsMessageAloneAndTheOthersKeepTheirs() {
        createEffects();
        refuseType();
        try (PostgresInbox inbox = fixture.builder().name(INBOX).build()) {
            List<Message> messages = List.of(Message.of("order-1", Content.of(1)), Message.of("order-2", Content.of(2)),
                    Message.of("order-3", Content.of(3)));
            // The second message's effect deletes its own row, so its result finds none.
            List<MessageResult<byte[]>> results = storing(inbox, "orders.Confirmation").applyAll(messages, (tx, message) -> {
                tx.execute("INSERT INTO effects VALUES (?)", message.id());
                if (message.id().equals("order-2")) {
                    tx.execute("DELETE FROM " + fixture.tables().messageTable() + " WHERE id = 'order-2'");
                }
                return utf8(message.id());
            });

            assertInstanceOf(Outcome.Applied.class, results.get(0).outcome().orElseThrow());
            assertInstanceOf(InboxStorageException.class, results.get(1).failure().orElseThrow());
            assertInstanceOf(Outcome.Applied.class, results.get(2).outcome().orElseThrow());
            assertEquals(2, effects(), "the failed message's write was rolled back with its savepoint");
            assertEquals(0, rows("order-2"));
            assertArrayEquals(utf8("order-1"), stored("order-1").bytes());
            assertArrayEquals(utf8("order-3"), stored("order-3").bytes());

            // A value the table refuses, for each message of a batch: each fails alone, and the
            // transaction goes on to the next after the rollback to the failed one's savepoint.
            ResultInbox<Handle, byte[]> refused = storing(inbox, "orders.Refused");
            List<MessageResult<byte[]>> refusedBatch = refused.applyAll(List.of(Message.of("order-5", Content.of(5)),
                    Message.of("order-6", Content.of(6))), (tx, message) -> new byte[] {5});
            assertEquals("23514", PostgresErrors.sqlState(refusedBatch.get(0).failure().orElseThrow()));
            assertEquals("23514", PostgresErrors.sqlState(refusedBatch.get(1).failure().orElseThrow()));
            assertEquals(0, rows("order-5") + rows("order-6"));
        }
    }

    @Test
    void aRefusedResultInAJoinedCallFailsTheCallAndTheCallersTransactionGoesOn() {
        createEffects();
        refuseType();
        try (PostgresInbox inbox = fixture.builder().name(INBOX).build(); Handle caller = fixture.jdbi().open()) {
            caller.begin();
            caller.execute("INSERT INTO effects VALUES ('the caller')");
            InboxStorageException failure = assertThrows(InboxStorageException.class, () -> storing(inbox,
                    "orders.Refused").applyJoined(caller, "order-1", Content.of(7), null, tx -> {
                        tx.execute("INSERT INTO effects VALUES ('order-1')");
                        return new byte[] {1};
                    }));
            assertEquals("23514", PostgresErrors.sqlState(failure));
            PendingOutcome<byte[]> next = storing(inbox, "orders.Confirmation")
                    .applyJoined(caller, "order-2", Content.of(7), null, tx -> {
                        tx.execute("INSERT INTO effects VALUES ('order-2')");
                        return new byte[] {2};
                    });
            caller.commit();
            next.committed();
        }

        assertEquals(0, rows("order-1"));
        assertEquals(2, effects(), "the caller's write and order-2's effect, not order-1's");
        assertEquals(new EncodedResult("orders.Confirmation", 1, new byte[] {2}), stored("order-2"));
    }

    @Test
    void aJoinedCallWhoseRowIsDeletedUnderItsResultFailsAndTheCallerGoesOn() {
        try (PostgresInbox inbox = fixture.builder().name(INBOX).build(); Handle caller = fixture.jdbi().open()) {
            caller.begin();
            InboxStorageException failure = assertThrows(InboxStorageException.class, () -> storing(inbox,
                    "orders.Confirmation").applyJoined(caller, "order-1", Content.of(7), null, tx -> {
                        tx.execute("DELETE FROM " + fixture.tables().messageTable() + " WHERE id = 'order-1'");
                        return new byte[] {1};
                    }));
            assertTrue(failure.getMessage().contains("found no row of the id"), failure.getMessage());
            assertEquals(1, caller.createQuery("SELECT 1").mapTo(Integer.class).one(), "the caller's transaction is usable");
            caller.commit();
        }

        assertEquals(0, rows("order-1"));
    }

    /**
     * The connection is lost in the round trip that carries the result and the {@code COMMIT}: the
     * outcome is unknown, and the server holds the record with its result exactly when it committed.
     */
    @Test
    void aConnectionLostWithTheResultsCommitLeavesTheOutcomeUnknownAndTheServerTellsTheTruth() throws Exception {
        EncodedResult result = new EncodedResult("orders.Confirmation", 1, new byte[] {7});
        try (FaultRelay relay = new FaultRelay(PostgresFixture.HOST, PostgresFixture.PORT)) {
            PostgresStore relayed = new PostgresStore(fixture.jdbiVia(relay.port(), ""), Duration.ofSeconds(10),
                    SchemaMode.NONE, fixture.tables());
            for (FaultRelay.Cut cut : FaultRelay.Cut.values()) {
                String id = "order-" + cut;
                int cutsBefore = relay.commitsCut();
                relay.cutCommit(cut, 0);
                StoreTransaction<Handle> tx = relayed.begin();
                try {
                    tx.claim(INBOX, id, fingerprint(id), Content.of(7), RECEIVED);
                    tx.handle();
                    tx.storeResult(INBOX, id, result);
                    assertThrows(OutcomeUnknownException.class, tx::commit, cut.toString());
                } finally {
                    tx.rollback();
                }
                assertEquals(cutsBefore + 1, relay.commitsCut(), "the relay cut the text with the COMMIT");
                if (cut == FaultRelay.Cut.AFTER_THE_SERVER) {
                    assertEquals(result, stored(id), "committed with its result");
                } else {
                    assertEquals(0, rows(id), "nothing committed");
                }
            }
        }
    }
}
