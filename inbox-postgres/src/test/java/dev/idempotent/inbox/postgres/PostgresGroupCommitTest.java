package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.testkit.GroupCommitProbe;
import dev.idempotent.inbox.testkit.Stock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Concurrent callers of one group-committing inbox share transactions; failures stay their own. */
class PostgresGroupCommitTest {

    private final ExecutorService callers = Executors.newCachedThreadPool();
    private final Map<String, Long> transactionOf = new ConcurrentHashMap<>();
    private PostgresFixture fixture;
    private Stock stock;
    private PostgresInbox inbox;

    @BeforeEach
    void open() {
        fixture = new PostgresFixture(true);
        stock = Stock.create(fixture.jdbi(), "snacks");
        fixture.jdbi().useHandle(handle -> handle.execute("CREATE TABLE shelf (item TEXT PRIMARY KEY)"));
        inbox = fixture.builder().name("warehouse").build();
    }

    @AfterEach
    void close() {
        callers.shutdownNow();
        inbox.close();
        fixture.close();
    }

    /** Puts {@code item} on the shelf and adds {@code qty}, noting the transaction it ran in. */
    private Integer receive(Handle tx, String id, String item, long qty) {
        transactionOf.put(id, tx.createQuery("SELECT txid_current()").mapTo(Long.class).one());
        tx.execute("INSERT INTO shelf (item) VALUES (?)", item);
        return stock.add(tx, qty);
    }

    /** Starts a caller whose effect holds the writer until {@code release} opens. */
    private Future<Outcome<Integer>> holdWriter(CountDownLatch running, CountDownLatch release) {
        return callers.submit(() -> inbox.apply("blocker", Content.of(1), tx -> {
            running.countDown();
            release.await();
            return receive(tx, "blocker", "blocker", 1);
        }));
    }

    /** Queues callers item-0..item-6; item-3 (if {@code clash}) puts its item on an occupied place. */
    private List<Future<Outcome<Integer>>> queueSeven(boolean clash) throws InterruptedException {
        List<Future<Outcome<Integer>>> results = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            String id = "item-" + i;
            String item = clash && i == 3 ? "occupied" : id;
            results.add(callers.submit(() -> inbox.apply(id, Content.of(10), tx -> receive(tx, id, item, 10))));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (GroupCommitProbe.queued(inbox) < 7) {
            assertTrue(System.nanoTime() < deadline, "the callers did not queue behind the writer");
            // Polling the queue's length: joining the queue fires no event to wait on.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        return results;
    }

    @Test
    void queuedCallersShareOneTransactionAndOneCommit() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome<Integer>> blocker = holdWriter(running, release);
        running.await();
        List<Future<Outcome<Integer>>> queued = queueSeven(false);

        release.countDown();

        assertInstanceOf(Outcome.Applied.class, blocker.get(30, TimeUnit.SECONDS));
        for (Future<Outcome<Integer>> result : queued) {
            assertInstanceOf(Outcome.Applied.class, result.get(30, TimeUnit.SECONDS));
        }
        long transactions = transactionOf.entrySet().stream()
                .filter(e -> e.getKey().startsWith("item-")).map(Map.Entry::getValue).distinct().count();
        assertEquals(1, transactions, "the seven queued messages were committed together: " + transactionOf);
        assertNotEquals(transactionOf.get("blocker"), transactionOf.get("item-0"));
        assertEquals(71, stock.total());
        assertEquals(8, Stock.inboxRows(fixture, "warehouse"));
    }

    @Test
    void databaseErrorInOneEffectRollsBackOnlyItsMessage() throws Exception {
        fixture.jdbi().useHandle(handle -> handle.execute("INSERT INTO shelf (item) VALUES ('occupied')"));
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Outcome<Integer>> blocker = holdWriter(running, release);
        running.await();
        List<Future<Outcome<Integer>>> queued = queueSeven(true);

        release.countDown();

        blocker.get(30, TimeUnit.SECONDS);
        for (int i = 0; i < queued.size(); i++) {
            if (i == 3) {
                ExecutionException thrown = assertThrows(ExecutionException.class, queued.get(i)::get);
                // A unique violation aborts a PostgreSQL transaction until its savepoint is rolled back.
                JdbiException failure = assertInstanceOf(JdbiException.class, thrown.getCause());
                assertEquals("23505", PostgresErrors.sqlState(failure));
            } else {
                assertInstanceOf(Outcome.Applied.class, queued.get(i).get(30, TimeUnit.SECONDS));
            }
        }
        assertEquals(1 + 6 * 10, stock.total());
        assertEquals(7, Stock.inboxRows(fixture, "warehouse"));
        assertTrue(inbox.find("item-3").isEmpty());
        assertInstanceOf(Outcome.Applied.class,
                inbox.apply("item-3", Content.of(10), tx -> receive(tx, "item-3", "item-3", 10)),
                "the failed message applies on retry");
        assertEquals(1 + 7 * 10, stock.total());
    }
}
