package dev.idempotent.inbox.sqlite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Random;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store side of stored results on a real file, on the fixture's renamed tables: what
 * {@code storeResult} writes in the inbox's own and in a joined transaction is what the claim's
 * read-back and {@code find} return, byte for byte, a stored null included; a row without one reads
 * as empty; a purge takes the result with the row.
 */
class SqliteStoredResultTest {

    private static final String INBOX = "warehouse";
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    @TempDir
    Path directory;

    private SqliteFixture fixture;
    private SqliteStore store;

    @BeforeEach
    void open() {
        fixture = new SqliteFixture(directory);
        store = new SqliteStore(SqliteInbox.jdbi(fixture.file()), Duration.ofSeconds(5), SchemaMode.CREATE,
                fixture.tables());
    }

    @AfterEach
    void close() {
        store.close();
        fixture.close();
    }

    /** Claims {@code id} new in the inbox's own transaction, stores {@code result} and commits. */
    private void applyWithResult(String id, EncodedResult result) {
        StoreTransaction<Handle> tx = store.begin();
        Content content = Content.of(7);
        assertEquals(Optional.empty(), tx.claim(INBOX, id, content.fingerprint(), null, T0));
        if (result != null) {
            tx.storeResult(INBOX, id, result);
        }
        tx.commit();
    }

    /** What a second delivery of {@code id} reads back in its claim. */
    private InboxRecord claimAgain(String id) {
        StoreTransaction<Handle> tx = store.begin();
        try {
            return tx.claim(INBOX, id, Content.of(7).fingerprint(), null, T0.plusSeconds(1)).orElseThrow();
        } finally {
            tx.rollback();
        }
    }

    private long rows() {
        return fixture.jdbi().withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM "
                + fixture.tables().messageTable()).mapTo(Long.class).one());
    }

    @Test
    void bytesRoundTripThroughFindAndTheClaimsReadBack() {
        byte[] bytes = {0, 1, 2, (byte) 0xff, 0, '\n', (byte) 0x80};
        EncodedResult result = new EncodedResult("orders.Confirmation", 3, bytes);

        applyWithResult("order-1", result);

        assertEquals(Optional.of(result), store.find(INBOX, "order-1").orElseThrow().result());
        assertEquals(Optional.of(result), claimAgain("order-1").result());
    }

    @Test
    void aStoredNullHasItsTypeAndNoBytesAndIsNotNoResult() {
        applyWithResult("order-1", new EncodedResult("orders.Confirmation", 1, null));

        EncodedResult stored = store.find(INBOX, "order-1").orElseThrow().result().orElseThrow();
        assertTrue(stored.isNull());
        assertEquals("orders.Confirmation", stored.type());
        assertEquals(1, stored.version());
    }

    @Test
    void anEightMebibyteResultRoundTrips() {
        byte[] bytes = new byte[8 * 1024 * 1024];
        new Random(35).nextBytes(bytes);

        applyWithResult("big-1", new EncodedResult("bytes", 0, bytes));

        assertArrayEquals(bytes, store.find(INBOX, "big-1").orElseThrow().result().orElseThrow().bytes());
        assertArrayEquals(bytes, claimAgain("big-1").result().orElseThrow().bytes());
    }

    @Test
    void aRowWithoutAResultReadsAsEmpty() {
        applyWithResult("plain-1", null);

        assertEquals(Optional.empty(), store.find(INBOX, "plain-1").orElseThrow().result());
        assertEquals(Optional.empty(), claimAgain("plain-1").result());
    }

    @Test
    void aResultRolledBackWithItsClaimLeavesNothing() {
        StoreTransaction<Handle> tx = store.begin();
        tx.claim(INBOX, "order-1", Content.of(7).fingerprint(), null, T0);
        tx.storeResult(INBOX, "order-1", new EncodedResult("t", 1, new byte[] {1}));
        tx.rollback();

        assertEquals(Optional.empty(), store.find(INBOX, "order-1"));
        assertEquals(0, rows());
    }

    @Test
    void aResultForAnIdThisTransactionDidNotClaimIsAStorageError() {
        StoreTransaction<Handle> tx = store.begin();
        try {
            InboxStorageException refused = assertThrows(InboxStorageException.class,
                    () -> tx.storeResult(INBOX, "never-claimed", new EncodedResult("t", 1, new byte[] {1})));
            assertTrue(refused.getMessage().contains("never-claimed"), refused.getMessage());
        } finally {
            tx.rollback();
        }
        assertEquals(0, rows());
    }

    @Test
    void aJoinedCallStoresItsResultInTheCallersTransaction() {
        EncodedResult result = new EncodedResult("orders.Confirmation", 2, new byte[] {4, 2});
        Jdbi callers = SqliteInbox.jdbi(fixture.file());
        try (Handle handle = callers.open()) {
            handle.begin();
            StoreTransaction<Handle> joined = store.join(handle);
            joined.savepoint();
            assertEquals(Optional.empty(), joined.claim(INBOX, "order-1", Content.of(7).fingerprint(), null, T0));
            joined.handle();
            joined.storeResult(INBOX, "order-1", result);
            joined.releaseSavepoint();
            assertEquals(Optional.empty(), store.find(INBOX, "order-1"), "not before the caller commits");
            handle.commit();
        }

        assertEquals(Optional.of(result), store.find(INBOX, "order-1").orElseThrow().result());
        assertEquals(Optional.of(result), claimAgain("order-1").result());
    }

    @Test
    void aPurgeRemovesTheRowWithItsResult() {
        applyWithResult("order-1", new EncodedResult("t", 1, new byte[1024]));
        Instant cutoff = T0.plusSeconds(60);

        StoreTransaction<Handle> tx = store.begin();
        tx.raiseHorizon(INBOX, cutoff);
        PurgeBatch batch = tx.deleteOldest(INBOX, cutoff, null, 100);
        tx.commit();

        assertEquals(1, batch.deleted());
        assertEquals(Optional.empty(), store.find(INBOX, "order-1"));
        assertEquals(0, rows());
        assertEquals(Optional.of(cutoff), store.horizon(INBOX));
    }
}
