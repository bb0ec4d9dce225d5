package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract of {@link InboxStore} and {@link StoreTransaction}, tested against a store directly
 * through the SPI, for adapter authors: what the core relies on when it drives a store. A new
 * adapter passes it before the engine's contracts ({@link InboxContract},
 * {@link RetentionContract}) are worth running.
 *
 * <p>Subclass it in the adapter's tests, in the adapter's package if its store is not public, and
 * implement {@link #openFixture()}, {@link #openStore(Duration)} and {@link #declaredWriters()}.
 * Effects write through the {@link Handle} a transaction hands out, so the contract covers stores
 * whose handle is Jdbi's.
 */
public abstract class StoreContract {

    private static final String INBOX = "warehouse";
    private static final String OTHER_INBOX = "returns";
    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00.123Z");
    // Long enough that a wait this contract expects to end never runs into it.
    private static final Duration PATIENT = Duration.ofSeconds(30);
    private static final Duration IMPATIENT = Duration.ofMillis(200);
    private static final long WAIT_SECONDS = 60;

    /** The fixture of the running test; its {@link InboxFixture#jdbi()} reaches the store's database. */
    protected InboxFixture fixture;
    private InboxStore<Handle> store;
    private Stock stock;
    private final List<InboxStore<Handle>> stores = new ArrayList<>();
    private final List<Tracked> transactions = Collections.synchronizedList(new ArrayList<>());
    private final ExecutorService threads = Executors.newCachedThreadPool();

    /** For subclasses. */
    protected StoreContract() {}

    /**
     * A fixture over a fresh, real database; closed after each test. Only its {@link InboxFixture#jdbi()},
     * {@link InboxFixture#holdWriteLock} and {@link InboxFixture#failedStatementAbortsTransaction()}
     * are used: the contract builds no inbox.
     *
     * @return the fixture
     * @throws Exception if the database cannot be prepared; the test fails
     */
    protected abstract InboxFixture openFixture() throws Exception;

    /**
     * A new store over {@link #fixture}'s database, creating the inbox schema if it is missing, as
     * the adapter's inbox would open it. The contract closes it after the test. A test may open
     * more than one.
     *
     * @param busyTimeout how long the store waits for a lock before {@link InboxBusyException}
     * @return the open store
     */
    protected abstract InboxStore<Handle> openStore(Duration busyTimeout);

    /**
     * {@return what the adapter's documentation says its database admits}: the contract checks that
     * the store declares it and, for {@link InboxStore.Writers#CONCURRENT}, that it keeps the promise.
     */
    protected abstract InboxStore.Writers declaredWriters();

    @BeforeEach
    void openDatabase() throws Exception {
        fixture = openFixture();
        store = open(PATIENT);
        stock = Stock.create(fixture.jdbi(), "warehouse");
    }

    @AfterEach
    void closeDatabase() throws InterruptedException {
        // A failed test may leave a transaction open, whose locks would block the clean-up.
        List<Tracked> open;
        synchronized (transactions) {
            open = new ArrayList<>(transactions);
        }
        for (Tracked tx : open) {
            if (!tx.ended) {
                try {
                    tx.rollback();
                } catch (RuntimeException ignored) {
                    // The test already failed; its own failure is the one to report.
                }
            }
        }
        threads.shutdownNow();
        threads.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS);
        stores.forEach(InboxStore::close);
        fixture.close();
    }

    private InboxStore<Handle> open(Duration busyTimeout) {
        InboxStore<Handle> opened = openStore(busyTimeout);
        stores.add(opened);
        return opened;
    }

    private StoreTransaction<Handle> begin() {
        return begin(store);
    }

    private StoreTransaction<Handle> begin(InboxStore<Handle> of) {
        Tracked tx = new Tracked(of.begin());
        transactions.add(tx);
        return tx;
    }

    private static Optional<InboxRecord> claim(StoreTransaction<Handle> tx, String id, Content content, Instant at) {
        return tx.claim(INBOX, id, content.fingerprint(), null, at);
    }

    /** Claims {@code id} new and commits, as a lone message would. */
    private void committed(String id, Content content, Instant at) {
        StoreTransaction<Handle> tx = begin();
        assertEquals(Optional.empty(), claim(tx, id, content, at), "claim of new id '" + id + "'");
        tx.commit();
    }

    private static InboxRecord record(String id, Content content, Instant at, boolean kept) {
        return new InboxRecord(INBOX, id, content.fingerprint(), at, kept ? Optional.of(content) : Optional.empty());
    }

    private static <T> T get(Future<T> future) throws Exception {
        try {
            return future.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        } catch (TimeoutException e) {
            throw new AssertionError("a transaction's thread did not finish within " + WAIT_SECONDS + " s", e);
        }
    }

    @Test
    void declaresTheWritersOfItsDatabase() {
        assertEquals(declaredWriters(), store.writers());
    }

    @Test
    void claimOfNewIdInsertsTheRecordWhichOnlyCommitMakesVisible() {
        Content content = Content.of(7);
        StoreTransaction<Handle> tx = begin();

        assertEquals(Optional.empty(), claim(tx, "snack-7", content, T0), "a new id's claim answers empty");
        assertEquals(Optional.empty(), store.find(INBOX, "snack-7"), "an uncommitted claim is not read outside");
        tx.commit();

        assertEquals(Optional.of(record("snack-7", content, T0, false)), store.find(INBOX, "snack-7"));
        assertEquals(1, Stock.inboxRows(fixture, INBOX));
    }

    @Test
    void claimKeepsContentWhenGivenAndReadsItBackWithItsType() {
        Content content = Content.structured("shipment", 3, new byte[] {0, 1, 2, (byte) 0xff});
        StoreTransaction<Handle> tx = begin();
        assertEquals(Optional.empty(), tx.claim(INBOX, "ship-1", content.fingerprint(), content, T0));
        tx.commit();

        InboxRecord found = store.find(INBOX, "ship-1").orElseThrow();

        assertEquals(record("ship-1", content, T0, true), found);
        assertEquals(content.type(), found.fingerprint().contentType());
        assertEquals(content, found.content().orElseThrow());
    }

    @Test
    void claimOfStoredIdReturnsExactlyTheStoredRecordAndChangesNothing() {
        Content first = Content.of("first");
        StoreTransaction<Handle> tx = begin();
        tx.claim(INBOX, "snack-7", first.fingerprint(), first, T0);
        tx.commit();
        Content second = Content.ofBytes(new byte[] {9, 9});

        StoreTransaction<Handle> again = begin();
        Optional<InboxRecord> stored =
                again.claim(INBOX, "snack-7", second.fingerprint(), second, T0.plus(Duration.ofHours(2)));
        again.commit();

        InboxRecord expected = record("snack-7", first, T0, true);
        assertEquals(Optional.of(expected), stored, "fingerprint, type, receive time and content as first stored");
        assertEquals(Optional.of(expected), store.find(INBOX, "snack-7"), "the stored record is left as it was");
    }

    @Test
    void claimOfStoredIdWithoutContentAnswersTheFingerprintOnly() {
        committed("snack-7", Content.of(7), T0);

        StoreTransaction<Handle> tx = begin();
        Optional<InboxRecord> stored = claim(tx, "snack-7", Content.of(8), T0.plusSeconds(5));
        tx.rollback();

        assertEquals(Optional.of(record("snack-7", Content.of(7), T0, false)), stored);
    }

    @Test
    void inboxesKeepTheirIdsApart() {
        committed("snack-7", Content.of(7), T0);

        StoreTransaction<Handle> tx = begin();
        assertEquals(Optional.empty(),
                tx.claim(OTHER_INBOX, "snack-7", Content.of(8).fingerprint(), null, T0.plusSeconds(1)));
        tx.commit();

        assertEquals(Content.of(7).fingerprint(), store.find(INBOX, "snack-7").orElseThrow().fingerprint());
        assertEquals(Content.of(8).fingerprint(), store.find(OTHER_INBOX, "snack-7").orElseThrow().fingerprint());
    }

    @Test
    void rollbackLeavesNeitherTheClaimNorTheEffectsWrites() {
        StoreTransaction<Handle> tx = begin();
        claim(tx, "snack-7", Content.of(7), T0);
        stock.add(tx.handle(), 7);

        tx.rollback();

        assertEquals(Optional.empty(), store.find(INBOX, "snack-7"));
        assertEquals(0, Stock.inboxRows(fixture, INBOX));
        assertEquals(0, stock.total());
        committed("snack-7", Content.of(7), T0);
    }

    @Test
    void effectWritesThroughTheHandleCommitWithTheClaim() {
        StoreTransaction<Handle> tx = begin();
        claim(tx, "snack-7", Content.of(7), T0);
        stock.add(tx.handle(), 7);
        assertEquals(0, stock.total(), "the effect's write is not visible outside before the commit");

        tx.commit();

        assertEquals(7, stock.total());
        assertTrue(store.find(INBOX, "snack-7").isPresent());
    }

    @Test
    void rollbackToSavepointUndoesOnlyWhatFollowedItAndReleaseKeepsIt() {
        StoreTransaction<Handle> tx = begin();
        // The shape of a batch: one savepoint per message, a failed message rolled back alone.
        tx.savepoint();
        assertEquals(Optional.empty(), claim(tx, "m1", Content.of(1), T0));
        stock.add(tx.handle(), 1);
        tx.releaseSavepoint();

        tx.savepoint();
        assertEquals(Optional.empty(), claim(tx, "m2", Content.of(10), T0));
        stock.add(tx.handle(), 10);
        tx.rollbackToSavepoint();

        tx.savepoint();
        assertEquals(Optional.of(record("m1", Content.of(1), T0, false)), claim(tx, "m1", Content.of(99), T0),
                "a later claim in the same transaction sees the earlier message's claim");
        tx.releaseSavepoint();

        tx.savepoint();
        assertEquals(Optional.empty(), claim(tx, "m2", Content.of(100), T0.plusSeconds(1)),
                "the rolled-back claim is gone, so the id is new again");
        stock.add(tx.handle(), 100);
        tx.releaseSavepoint();
        tx.commit();

        assertEquals(101, stock.total());
        assertEquals(Optional.of(record("m1", Content.of(1), T0, false)), store.find(INBOX, "m1"));
        assertEquals(Optional.of(record("m2", Content.of(100), T0.plusSeconds(1), false)), store.find(INBOX, "m2"));
    }

    @Test
    void nestedSavepointsOfBatchesInOneGroupEachUndoTheirOwnWritesOnly() {
        StoreTransaction<Handle> tx = begin();
        // A group of callers, one savepoint each, whose batches take a savepoint per message.
        tx.savepoint();
        tx.savepoint();
        claim(tx, "a1", Content.of(1), T0);
        stock.add(tx.handle(), 1);
        tx.releaseSavepoint();
        tx.savepoint();
        claim(tx, "a2", Content.of(2), T0);
        stock.add(tx.handle(), 10);
        tx.rollbackToSavepoint();
        tx.releaseSavepoint();

        tx.savepoint();
        tx.savepoint();
        claim(tx, "b1", Content.of(3), T0);
        stock.add(tx.handle(), 100);
        tx.releaseSavepoint();
        // The whole caller fails after its message succeeded: its released savepoint goes too.
        tx.rollbackToSavepoint();

        tx.savepoint();
        claim(tx, "c1", Content.of(4), T0);
        stock.add(tx.handle(), 1000);
        tx.releaseSavepoint();
        tx.commit();

        assertEquals(1001, stock.total());
        assertTrue(store.find(INBOX, "a1").isPresent());
        assertEquals(Optional.empty(), store.find(INBOX, "a2"));
        assertEquals(Optional.empty(), store.find(INBOX, "b1"));
        assertTrue(store.find(INBOX, "c1").isPresent());
        assertEquals(2, Stock.inboxRows(fixture, INBOX));
    }

    @Test
    void raiseHorizonNeverLowersIt() {
        Instant t1 = T0.plus(Duration.ofDays(1));
        Instant t2 = T0.plus(Duration.ofDays(2));
        assertEquals(Optional.empty(), store.horizon(INBOX), "a never purged inbox has no horizon");

        raise(t1);
        assertEquals(Optional.of(t1), store.horizon(INBOX));
        raise(T0);
        assertEquals(Optional.of(t1), store.horizon(INBOX), "an earlier cutoff leaves the horizon where it is");
        raise(t2);
        assertEquals(Optional.of(t2), store.horizon(INBOX));
        assertEquals(Optional.empty(), store.horizon(OTHER_INBOX), "each inbox has its own horizon");
    }

    private void raise(Instant cutoff) {
        StoreTransaction<Handle> tx = begin();
        tx.raiseHorizon(INBOX, cutoff);
        tx.deleteOldest(INBOX, cutoff, null, 10);
        tx.commit();
    }

    @Test
    void horizonOutsideIsTheCommittedOneAndInsideATransactionAfterAClaimToo() {
        Instant t1 = T0.plus(Duration.ofDays(1));
        Instant t2 = T0.plus(Duration.ofDays(2));
        raise(t1);

        StoreTransaction<Handle> purge = begin();
        purge.raiseHorizon(INBOX, t2);
        purge.deleteOldest(INBOX, t2, null, 10);
        assertEquals(Optional.of(t1), store.horizon(INBOX), "an uncommitted raise is not read outside");
        purge.rollback();
        assertEquals(Optional.of(t1), store.horizon(INBOX), "a rolled-back raise leaves the horizon");

        StoreTransaction<Handle> tx = begin();
        claim(tx, "snack-7", Content.of(7), T0);
        assertEquals(Optional.of(t1), tx.horizon(INBOX));
        assertEquals(Optional.empty(), tx.horizon(OTHER_INBOX));
        tx.commit();
    }

    @Test
    void horizonReadAfterAClaimSeesThePurgeTheClaimWaitedFor() throws Exception {
        assumeTrue(store.writers() == InboxStore.Writers.CONCURRENT,
                "one writer at a time: no claim can wait for a purge");
        committed("old", Content.of(1), T0);
        Instant cutoff = T0.plus(Duration.ofDays(1));
        StoreTransaction<Handle> purge = begin();
        purge.raiseHorizon(INBOX, cutoff);
        assertEquals(new PurgeBatch(1, Optional.of(new PurgePosition(T0, "old"))),
                purge.deleteOldest(INBOX, cutoff, null, 10));
        CountDownLatch claiming = new CountDownLatch(1);

        Future<List<Optional<?>>> resend = threads.submit(() -> {
            StoreTransaction<Handle> tx = begin();
            claiming.countDown();
            Optional<InboxRecord> claimed = claim(tx, "old", Content.of(1), cutoff.plusSeconds(1));
            Optional<Instant> horizon = tx.horizon(INBOX);
            tx.rollback();
            return List.of(claimed, horizon);
        });
        assertTrue(claiming.await(WAIT_SECONDS, TimeUnit.SECONDS));
        // Whether the claim already waits for the purge or comes after its commit, it must answer the same.
        purge.commit();

        assertEquals(List.of(Optional.empty(), Optional.of(cutoff)), get(resend),
                "the purged id claims as new, and the horizon read after the claim is the purge's");
    }

    @Test
    void deleteOldestTakesRowsBeforeTheCutoffOldestFirstUpToTheLimit() {
        // Claimed out of order, so that only the store's ordering can put them in purge order.
        StoreTransaction<Handle> setup = begin();
        claim(setup, "d", Content.of(4), T0.plusSeconds(2));
        claim(setup, "b", Content.of(2), T0);
        claim(setup, "e", Content.of(5), T0.plusSeconds(3));
        claim(setup, "a", Content.of(1), T0);
        claim(setup, "c", Content.of(3), T0.plusSeconds(1));
        setup.claim(OTHER_INBOX, "z", Content.of(0).fingerprint(), null, T0.minus(Duration.ofHours(1)));
        setup.commit();
        Instant cutoff = T0.plusSeconds(3);

        StoreTransaction<Handle> purge = begin();
        PurgeBatch first = purge.deleteOldest(INBOX, cutoff, null, 2);
        assertEquals(new PurgeBatch(2, Optional.of(new PurgePosition(T0, "b"))), first);
        PurgeBatch second = purge.deleteOldest(INBOX, cutoff, first.last().orElseThrow(), 2);
        assertEquals(new PurgeBatch(2, Optional.of(new PurgePosition(T0.plusSeconds(2), "d"))), second);
        PurgeBatch third = purge.deleteOldest(INBOX, cutoff, second.last().orElseThrow(), 2);
        assertEquals(new PurgeBatch(0, Optional.empty()), third, "e was received at the cutoff, not before it");
        purge.commit();

        for (String id : List.of("a", "b", "c", "d")) {
            assertEquals(Optional.empty(), store.find(INBOX, id), id);
        }
        assertTrue(store.find(INBOX, "e").isPresent());
        assertTrue(store.find(OTHER_INBOX, "z").isPresent(), "another inbox's rows are not purged");
    }

    @Test
    void deleteOldestStartsAfterThePositionGiven() {
        StoreTransaction<Handle> setup = begin();
        claim(setup, "a", Content.of(1), T0);
        claim(setup, "b", Content.of(2), T0);
        claim(setup, "c", Content.of(3), T0.plusSeconds(1));
        setup.commit();

        StoreTransaction<Handle> purge = begin();
        PurgeBatch batch = purge.deleteOldest(INBOX, T0.plusSeconds(10), new PurgePosition(T0, "a"), 10);
        purge.commit();

        assertEquals(new PurgeBatch(2, Optional.of(new PurgePosition(T0.plusSeconds(1), "c"))), batch);
        assertTrue(store.find(INBOX, "a").isPresent(), "the row at the position itself is not deleted again");
        assertEquals(1, Stock.inboxRows(fixture, INBOX));
    }

    @Test
    void oldestReceivedAtIsTheEarliestCommittedRowOfTheInbox() {
        assertEquals(Optional.empty(), store.oldestReceivedAt(INBOX), "an empty inbox has no oldest row");
        StoreTransaction<Handle> setup = begin();
        claim(setup, "late", Content.of(1), T0.plusSeconds(5));
        claim(setup, "early", Content.of(2), T0.plusSeconds(1));
        claim(setup, "middle", Content.of(3), T0.plusSeconds(3));
        setup.claim(OTHER_INBOX, "older", Content.of(4).fingerprint(), null, T0);
        setup.commit();

        StoreTransaction<Handle> uncommitted = begin();
        claim(uncommitted, "earliest", Content.of(5), T0.minusSeconds(60));

        assertEquals(Optional.of(T0.plusSeconds(1)), store.oldestReceivedAt(INBOX));
        assertEquals(Optional.of(T0), store.oldestReceivedAt(OTHER_INBOX));
        uncommitted.rollback();
    }

    @Test
    void claimFailsBusyWithinTheBusyTimeoutWhileAnotherConnectionHoldsWhatItNeeds() {
        InboxStore<Handle> impatient = open(IMPATIENT);

        try (InboxFixture.HeldLock held = fixture.holdWriteLock(INBOX, "snack-7")) {
            // A store with one writer may already fail to begin; one with many fails on the claim.
            assertThrows(InboxBusyException.class, () -> {
                StoreTransaction<Handle> tx = begin(impatient);
                try {
                    claim(tx, "snack-7", Content.of(7), T0);
                } finally {
                    tx.rollback();
                }
            });
        }

        StoreTransaction<Handle> tx = begin(impatient);
        assertEquals(Optional.empty(), claim(tx, "snack-7", Content.of(7), T0),
                "the store works once the lock is gone");
        tx.commit();
        assertTrue(store.find(INBOX, "snack-7").isPresent());
    }

    @Test
    void claimOfAnIdAnotherTransactionClaimedWaitsAndAnswersWhatItCommitted() throws Exception {
        assumeTrue(store.writers() == InboxStore.Writers.CONCURRENT, "one writer at a time: no two claims can overlap");
        StoreTransaction<Handle> first = begin();
        claim(first, "snack-7", Content.of(7), T0);
        CountDownLatch claiming = new CountDownLatch(1);

        Future<Optional<InboxRecord>> second = threads.submit(() -> {
            StoreTransaction<Handle> tx = begin();
            claiming.countDown();
            Optional<InboxRecord> stored = claim(tx, "snack-7", Content.of(8), T0.plusSeconds(1));
            tx.commit();
            return stored;
        });
        assertTrue(claiming.await(WAIT_SECONDS, TimeUnit.SECONDS));
        first.commit();

        assertEquals(Optional.of(record("snack-7", Content.of(7), T0, false)), get(second));
    }

    @Test
    void claimOfAnIdAnotherTransactionClaimedAndRolledBackIsNew() throws Exception {
        assumeTrue(store.writers() == InboxStore.Writers.CONCURRENT, "one writer at a time: no two claims can overlap");
        StoreTransaction<Handle> first = begin();
        claim(first, "snack-7", Content.of(7), T0);
        CountDownLatch claiming = new CountDownLatch(1);

        Future<Optional<InboxRecord>> second = threads.submit(() -> {
            StoreTransaction<Handle> tx = begin();
            claiming.countDown();
            Optional<InboxRecord> stored = claim(tx, "snack-7", Content.of(8), T0.plusSeconds(1));
            tx.commit();
            return stored;
        });
        assertTrue(claiming.await(WAIT_SECONDS, TimeUnit.SECONDS));
        first.rollback();

        assertEquals(Optional.empty(), get(second));
        assertEquals(Optional.of(record("snack-7", Content.of(8), T0.plusSeconds(1), false)),
                store.find(INBOX, "snack-7"));
    }

    @Test
    void concurrentStoreRunsTwoOpenTransactionsOnTwoThreadsAtOnce() throws Exception {
        assumeTrue(store.writers() == InboxStore.Writers.CONCURRENT, "the store declares one writer at a time");
        // Each thread keeps its transaction open until both are open: a store that serialised
        // them would leave the barrier waiting.
        CyclicBarrier bothOpen = new CyclicBarrier(2);
        List<Future<Void>> writers = new ArrayList<>();
        List<Stock> stocks = new ArrayList<>();
        for (String id : List.of("left", "right")) {
            // A stock row each: two writes to one row would wait for each other whatever the store does.
            Stock own = Stock.create(fixture.jdbi(), id);
            stocks.add(own);
            writers.add(threads.submit(() -> {
                StoreTransaction<Handle> tx = begin();
                claim(tx, id, Content.of(1), T0);
                own.add(tx.handle(), 1);
                bothOpen.await(WAIT_SECONDS, TimeUnit.SECONDS);
                tx.commit();
                return null;
            }));
        }
        for (Future<Void> writer : writers) {
            get(writer);
        }

        assertEquals(List.of(1L, 1L), stocks.stream().map(Stock::total).toList());
        assertEquals(2, Stock.inboxRows(fixture, INBOX));
    }

    @Test
    void commitAfterAnEffectSwallowedAFailedStatementThrowsAndRecordsNothing() {
        assumeTrue(fixture.failedStatementAbortsTransaction(), "a failed statement fails alone on this database");
        StoreTransaction<Handle> tx = begin();
        claim(tx, "snack-7", Content.of(7), T0);
        swallowFailedStatement(tx.handle());

        assertThrows(EffectBrokeTransactionException.class, tx::commit);
        tx.rollback();

        assertEquals(Optional.empty(), store.find(INBOX, "snack-7"));
    }

    @Test
    void releaseAfterAnEffectSwallowedAFailedStatementThrowsAndTheRollbackToItSavesTheRest() {
        assumeTrue(fixture.failedStatementAbortsTransaction(), "a failed statement fails alone on this database");
        StoreTransaction<Handle> tx = begin();
        tx.savepoint();
        claim(tx, "m1", Content.of(1), T0);
        stock.add(tx.handle(), 1);
        tx.releaseSavepoint();
        tx.savepoint();
        claim(tx, "m2", Content.of(2), T0);
        swallowFailedStatement(tx.handle());

        assertThrows(EffectBrokeTransactionException.class, tx::releaseSavepoint);
        tx.rollbackToSavepoint();
        tx.commit();

        assertTrue(store.find(INBOX, "m1").isPresent());
        assertEquals(Optional.empty(), store.find(INBOX, "m2"));
        assertEquals(1, stock.total());
    }

    @Test
    void failedStatementTheEffectSwallowedDoesNotStopTheCommitWhereItFailsAlone() {
        assumeFalse(fixture.failedStatementAbortsTransaction(), "a failed statement aborts the whole transaction here");
        StoreTransaction<Handle> tx = begin();
        claim(tx, "snack-7", Content.of(7), T0);
        stock.add(tx.handle(), 7);
        swallowFailedStatement(tx.handle());

        tx.commit();

        assertTrue(store.find(INBOX, "snack-7").isPresent());
        assertEquals(7, stock.total());
    }

    private static void swallowFailedStatement(Handle handle) {
        try {
            handle.execute("INSERT INTO no_such_table (id) VALUES (1)");
        } catch (JdbiException expected) {
            // What a careless effect does; the store must notice at the latest when it commits.
            return;
        }
        throw new AssertionError("the statement meant to fail succeeded");
    }

    /** Remembers whether the transaction ended, so that one a failed test left open is rolled back. */
    private static final class Tracked implements StoreTransaction<Handle> {

        private final StoreTransaction<Handle> tx;
        private volatile boolean ended;

        Tracked(StoreTransaction<Handle> tx) {
            this.tx = tx;
        }

        @Override
        public Handle handle() {
            return tx.handle();
        }

        @Override
        public Optional<InboxRecord> claim(
                String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
            return tx.claim(inbox, id, fingerprint, content, receivedAt);
        }

        @Override
        public void storeResult(String inbox, String id, EncodedResult result) {
            tx.storeResult(inbox, id, result);
        }

        @Override
        public Optional<Instant> horizon(String inbox) {
            return tx.horizon(inbox);
        }

        @Override
        public void savepoint() {
            tx.savepoint();
        }

        @Override
        public void releaseSavepoint() {
            tx.releaseSavepoint();
        }

        @Override
        public void rollbackToSavepoint() {
            tx.rollbackToSavepoint();
        }

        @Override
        public void raiseHorizon(String inbox, Instant cutoff) {
            tx.raiseHorizon(inbox, cutoff);
        }

        @Override
        public PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
            return tx.deleteOldest(inbox, cutoff, after, limit);
        }

        @Override
        public void commit() {
            tx.commit();
            ended = true;
        }

        @Override
        public void rollback() {
            ended = true;
            tx.rollback();
        }
    }
}
