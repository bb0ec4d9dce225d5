package dev.idempotent.inbox.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.testing.InMemoryDatabase;
import dev.idempotent.inbox.testing.InMemoryStore;
import dev.idempotent.inbox.testing.RecordingListener;
import dev.idempotent.inbox.testing.TestInbox;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link InboxEngine#applyJoined} over a store whose caller-owned transactions are real: the claim
 * and the effect live and die with the caller's transaction, and the outcome is counted only when
 * the caller reports its commit.
 */
class InboxEngineJoinedTest {

    private final InMemoryDatabase database = new InMemoryDatabase();
    private final RecordingListener listener = new RecordingListener(database);
    private final TestInbox inbox = TestInbox.builder(database)
            .name("receipts").busyTimeout(Duration.ofSeconds(5)).listener(listener).build();

    @AfterEach
    void close() {
        inbox.close();
    }

    private StoreTransaction<InMemoryStore.Tx> callerBegins() {
        return inbox.store().begin();
    }

    @Test
    void appliedCountsOnlyWhenTheCallerReportsItsCommit() {
        StoreTransaction<InMemoryStore.Tx> caller = callerBegins();
        PendingOutcome<Long> pending = inbox.applyJoined(caller.handle(), "snack-7", Content.of(7), null,
                tx -> tx.add("stock", 7));
        caller.handle().add("audit", 1); // the caller's own work after the apply, in the same transaction
        assertInstanceOf(Outcome.Applied.class, pending.uncommitted());
        assertEquals(new InboxStats(0, 0, 0, 0, 0, 0, 0), inbox.stats(), "nothing counted before the commit");
        assertTrue(listener.events().stream().noneMatch(e -> e.startsWith("APPLIED")), listener.events().toString());

        caller.commit();
        Outcome<Long> outcome = pending.committed();
        assertSame(pending.uncommitted(), outcome);
        assertEquals(7L, ((Outcome.Applied<Long>) outcome).result());
        assertEquals(1, inbox.stats().applied());
        assertEquals(7, database.value("stock"));
        assertEquals(1, database.value("audit"));
        assertTrue(database.row("receipts", "snack-7").isPresent());
        assertEquals(1, database.commits(), "the caller's one commit, none of the inbox's own");

        assertSame(outcome, pending.committed(), "reporting twice returns the same outcome");
        assertEquals(1, inbox.stats().applied(), "and counts once");
        assertThrows(IllegalStateException.class, pending::rolledBack);
    }

    @Test
    void aRolledBackCallerTransactionLeavesNothingAndCountsNothing() {
        StoreTransaction<InMemoryStore.Tx> caller = callerBegins();
        PendingOutcome<Long> pending = inbox.applyJoined(caller.handle(), "snack-7", Content.of(7), null,
                tx -> tx.add("stock", 7));
        caller.rollback();
        pending.rolledBack();
        pending.rolledBack(); // twice does nothing
        assertThrows(IllegalStateException.class, pending::committed);
        assertEquals(0, inbox.stats().attempts());
        assertTrue(database.row("receipts", "snack-7").isEmpty());
        assertEquals(0, database.value("stock"));

        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> tx.add("stock", 7)),
                "a retry of the rolled-back id applies");
    }

    @Test
    void anEffectThatThrowsLeavesNeitherClaimNorWritesAndTheCallerGoesOn() {
        StoreTransaction<InMemoryStore.Tx> caller = callerBegins();
        caller.handle().add("audit", 1);
        IOException thrown = new IOException("no such item");
        IOException caught = assertThrows(IOException.class, () -> inbox.applyJoined(caller.handle(), "snack-7",
                Content.of(7), null, tx -> {
                    tx.add("stock", 7);
                    throw thrown;
                }));
        assertSame(thrown, caught, "the effect's exception arrives unchanged");
        PendingOutcome<Long> next = inbox.applyJoined(caller.handle(), "snack-8", Content.of(8), null,
                tx -> tx.add("stock", 8));
        caller.commit();
        next.committed();

        assertEquals(8, database.value("stock"), "only the second message's write");
        assertEquals(1, database.value("audit"), "the caller's own write survived");
        assertTrue(database.row("receipts", "snack-7").isEmpty(), "no claim of the failed message");
        assertEquals(1, inbox.stats().applied());
        assertEquals(1, inbox.stats().failed(), "a failure is counted when it happens: nothing can undo it");
    }

    @Test
    void aDuplicateInTheCallersTransactionRunsNoEffect() {
        inbox.apply("snack-7", Content.of(7), tx -> tx.add("stock", 7));
        StoreTransaction<InMemoryStore.Tx> caller = callerBegins();
        PendingOutcome<Long> same = inbox.applyJoined(caller.handle(), "snack-7", Content.of(7), null,
                tx -> tx.add("stock", 7));
        PendingOutcome<Long> other = inbox.applyJoined(caller.handle(), "snack-7", Content.of(9), null,
                tx -> tx.add("stock", 9));
        caller.commit();
        assertInstanceOf(Outcome.Duplicate.class, same.committed());
        assertInstanceOf(Outcome.Conflict.class, other.committed());
        assertEquals(7, database.value("stock"));
        assertEquals(new InboxStats(1, 1, 1, 0, 0, 0, 0), inbox.stats());
    }

    @Test
    void twoInboxesRecordTheirIdsInOneCallerTransaction() {
        try (TestInbox audit = TestInbox.builder(database).name("audit").build()) {
            StoreTransaction<InMemoryStore.Tx> caller = callerBegins();
            PendingOutcome<Long> receipt = inbox.applyJoined(caller.handle(), "r-1", Content.of(1), null,
                    tx -> tx.add("stock", 1));
            PendingOutcome<Long> audited = audit.applyJoined(caller.handle(), "r-1", Content.of(1), null,
                    tx -> tx.add("audited", 1));
            caller.commit();
            receipt.committed();
            audited.committed();
            assertTrue(database.row("receipts", "r-1").isPresent());
            assertTrue(database.row("audit", "r-1").isPresent());
            assertEquals(1, inbox.stats().applied());
            assertEquals(1, audit.stats().applied());
        }
    }

    @Test
    void badInputIsRefusedBeforeTheCallersTransactionIsTouched() {
        StoreTransaction<InMemoryStore.Tx> caller = callerBegins();
        assertThrows(InvalidMessageException.class, () -> inbox.applyJoined(caller.handle(), " ", Content.of(7), null,
                tx -> tx.add("stock", 7)));
        assertThrows(NullPointerException.class, () -> inbox.applyJoined(null, "snack-7", Content.of(7), null,
                tx -> tx.add("stock", 7)));
        caller.commit();
        assertEquals(0, database.rows("receipts"));
        assertEquals(1, inbox.stats().invalid());
    }

    @Test
    void joiningFromInsideAnEffectOfTheSameInboxIsRefusedAtOnce() {
        StoreTransaction<InMemoryStore.Tx> caller = callerBegins();
        InboxException refused = assertThrows(InboxException.class, () -> inbox.applyJoined(caller.handle(), "a",
                Content.of(1), null, tx -> inbox.applyJoined(tx, "b", Content.of(1), null, inner -> 1L)));
        assertTrue(refused.getMessage().contains("from inside an effect"), refused.getMessage());
        caller.commit();
        assertEquals(0, database.rows("receipts"), "the outer call's claim went with its savepoint");
    }

    @Test
    void aClosedInboxRefusesToJoin() {
        StoreTransaction<InMemoryStore.Tx> caller = callerBegins();
        inbox.close();
        assertThrows(InboxException.class, () -> inbox.applyJoined(caller.handle(), "a", Content.of(1), null,
                tx -> 1L));
        caller.rollback();
        assertEquals(List.of(), listener.failures().stream().filter(f -> !(f instanceof InboxException)).toList());
    }
}
