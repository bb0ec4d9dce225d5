package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.ContentType;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
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
}
