package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.time.Instant;
import java.util.Optional;
import java.util.Random;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The stored result on MariaDB, through the store itself on the fixture's renamed tables: stored
 * on the claimed row in the claim's transaction, own or joined, read back by find and by a later
 * claim of the id, and purged with the row.
 */
class MariaDbStoredResultTest {

    private static final String INBOX = "warehouse";
    private static final Content CONTENT = Content.of(7);

    private final MariaDbFixture fixture = new MariaDbFixture();
    private final MariaDbStore store = new MariaDbStore(fixture.jdbi(), fixture.builder().settings());

    @AfterEach
    void close() {
        store.close();
        fixture.close();
    }

    /** Claims {@code id} in a transaction of its own, stores {@code result} if not null, commits. */
    private void apply(String id, EncodedResult result, Instant receivedAt) {
        StoreTransaction<Handle> tx = store.begin();
        try {
            assertEquals(Optional.empty(), tx.claim(INBOX, id, CONTENT.fingerprint(), null, receivedAt));
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

    /** What a later claim of {@code id} meets, in a transaction it rolls back. */
    private InboxRecord claimedAgain(String id) {
        StoreTransaction<Handle> tx = store.begin();
        try {
            return tx.claim(INBOX, id, CONTENT.fingerprint(), null, Instant.now()).orElseThrow();
        } finally {
            tx.rollback();
        }
    }

    @Test
    void bytesRoundTripThroughFindAndALaterClaim() {
        byte[] bytes = {0, 1, 2, (byte) 0xff, '\'', '\\', 0, 'x'};
        apply("snack-7", new EncodedResult("orders.Confirmation", 3, bytes), Instant.ofEpochMilli(1_000));

        EncodedResult found = store.find(INBOX, "snack-7").orElseThrow().result().orElseThrow();
        assertEquals(new EncodedResult("orders.Confirmation", 3, bytes), found);
        assertArrayEquals(bytes, found.bytes());
        assertEquals(found, claimedAgain("snack-7").result().orElseThrow());
    }

    @Test
    void aStoredNullHasItsTypeAndNoBytes() {
        apply("snack-7", new EncodedResult("orders.Confirmation", 1, null), Instant.ofEpochMilli(1_000));

        EncodedResult found = store.find(INBOX, "snack-7").orElseThrow().result().orElseThrow();
        assertTrue(found.isNull());
        assertEquals("orders.Confirmation", found.type());
        assertEquals(1, found.version());
        assertTrue(claimedAgain("snack-7").result().orElseThrow().isNull());
    }

    @Test
    void anEmptyResultIsNotANull() {
        apply("snack-7", new EncodedResult("bytes", 0, new byte[0]), Instant.ofEpochMilli(1_000));

        EncodedResult found = store.find(INBOX, "snack-7").orElseThrow().result().orElseThrow();
        assertArrayEquals(new byte[0], found.bytes());
    }

    @Test
    void aRowWithoutAResultReadsAsEmpty() {
        apply("snack-7", null, Instant.ofEpochMilli(1_000));

        assertEquals(Optional.empty(), store.find(INBOX, "snack-7").orElseThrow().result());
        assertEquals(Optional.empty(), claimedAgain("snack-7").result());
    }

    @Test
    void anEightMebibyteResultRoundTrips() {
        byte[] bytes = new byte[8 * 1024 * 1024];
        new Random(35).nextBytes(bytes);
        apply("big", new EncodedResult("blob", 1, bytes), Instant.ofEpochMilli(1_000));

        assertArrayEquals(bytes, store.find(INBOX, "big").orElseThrow().result().orElseThrow().bytes());
    }

    /**
     * A result whose statement would exceed the server's {@code max_allowed_packet} is refused as
     * too large before it is sent: sent, the server would drop the connection and the whole
     * transaction with it. The transaction stays usable and rolls back, leaving nothing.
     */
    @Test
    void aResultOverTheServersMaxAllowedPacketIsRefusedAsTooLargeAndRecordsNothing() {
        long maxPacket = fixture.admin().withHandle(handle -> handle.createQuery("SELECT @@max_allowed_packet")
                .mapTo(Long.class).one());
        assumeTrue(maxPacket <= 64 * 1024 * 1024, "a server whose packets take " + maxPacket + " bytes");
        byte[] bytes = new byte[(int) maxPacket + 1024];
        StoreTransaction<Handle> tx = store.begin();
        StoredResultException failed;
        try {
            tx.claim(INBOX, "huge", CONTENT.fingerprint(), null, Instant.ofEpochMilli(1_000));
            tx.handle();

            failed = assertThrows(StoredResultException.class,
                    () -> tx.storeResult(INBOX, "huge", new EncodedResult("t", 1, bytes)));
        } finally {
            tx.rollback();
        }

        assertEquals(StoredResultException.Kind.TOO_LARGE, failed.kind(), failed.getMessage());
        assertTrue(failed.getMessage().contains("max_allowed_packet"), failed.getMessage());
        assertEquals(Optional.empty(), store.find(INBOX, "huge"));
    }

    /** Escaped bytes count twice: a result of quotes just under the packet is refused, not sent. */
    @Test
    void aResultThatFitsOnlyUnescapedIsRefusedBeforeItIsSent() {
        long maxPacket = fixture.admin().withHandle(handle -> handle.createQuery("SELECT @@max_allowed_packet")
                .mapTo(Long.class).one());
        assumeTrue(maxPacket <= 64 * 1024 * 1024, "a server whose packets take " + maxPacket + " bytes");
        byte[] quotes = new byte[(int) maxPacket - 4096];
        java.util.Arrays.fill(quotes, (byte) '\'');
        StoreTransaction<Handle> tx = store.begin();
        try {
            tx.claim(INBOX, "quotes", CONTENT.fingerprint(), null, Instant.ofEpochMilli(1_000));
            tx.handle();

            assertEquals(StoredResultException.Kind.TOO_LARGE, assertThrows(StoredResultException.class,
                    () -> tx.storeResult(INBOX, "quotes", new EncodedResult("t", 1, quotes))).kind());
            tx.storeResult(INBOX, "quotes", new EncodedResult("t", 1, new byte[] {'\''}));
            tx.commit();
        } catch (RuntimeException e) {
            tx.rollback();
            throw e;
        }

        assertArrayEquals(new byte[] {'\''}, store.find(INBOX, "quotes").orElseThrow().result().orElseThrow().bytes(),
                "the transaction went on after the refusal");
    }

    @Test
    void aResultRolledBackWithItsClaimLeavesNothing() {
        StoreTransaction<Handle> tx = store.begin();
        tx.claim(INBOX, "snack-7", CONTENT.fingerprint(), null, Instant.ofEpochMilli(1_000));
        tx.handle();
        tx.storeResult(INBOX, "snack-7", new EncodedResult("t", 1, new byte[] {1}));
        tx.rollback();

        assertEquals(Optional.empty(), store.find(INBOX, "snack-7"));
    }

    @Test
    void theJoinedTransactionStoresTheResultInTheCallersTransaction() {
        byte[] bytes = {4, 2};
        try (Handle caller = fixture.jdbi().open()) {
            caller.begin();
            StoreTransaction<Handle> tx = store.join(caller);
            tx.savepoint();
            assertEquals(Optional.empty(), tx.claim(INBOX, "joined", CONTENT.fingerprint(), null, Instant.ofEpochMilli(1)));
            tx.handle();
            tx.storeResult(INBOX, "joined", new EncodedResult("t", 2, bytes));
            tx.releaseSavepoint();
            assertEquals(Optional.empty(), store.find(INBOX, "joined"), "not before the caller commits");
            caller.commit();
        }

        assertEquals(new EncodedResult("t", 2, bytes), store.find(INBOX, "joined").orElseThrow().result().orElseThrow());
    }

    @Test
    void purgeRemovesTheRowWithItsResult() {
        apply("old", new EncodedResult("t", 1, new byte[] {1, 2, 3}), Instant.ofEpochMilli(1_000));
        apply("new", new EncodedResult("t", 1, new byte[] {4}), Instant.ofEpochMilli(9_000));

        Instant cutoff = Instant.ofEpochMilli(5_000);
        StoreTransaction<Handle> purge = store.begin();
        purge.raiseHorizon(INBOX, cutoff);
        assertEquals(1, purge.deleteOldest(INBOX, cutoff, null, 10).deleted());
        purge.commit();

        assertEquals(Optional.empty(), store.find(INBOX, "old"));
        long left = fixture.admin().withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM "
                + fixture.tables().messageTable() + " WHERE id = 'old' OR result = x'010203'").mapTo(Long.class).one());
        assertEquals(0, left);
        assertTrue(store.find(INBOX, "new").orElseThrow().result().isPresent());
    }
}
