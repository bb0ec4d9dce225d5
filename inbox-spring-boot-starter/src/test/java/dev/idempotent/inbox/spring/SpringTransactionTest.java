package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.spring.app.MovementRepository;
import dev.idempotent.inbox.spring.app.ReceiptApplication;
import dev.idempotent.inbox.spring.app.ReceiptService;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A {@code @Transactional} service on the real PostgreSQL, with Hibernate: the claim, the
 * JdbcClient write and the JPA write commit together or not at all, and are counted after the
 * commit only.
 */
@SpringBootTest(classes = ReceiptApplication.class)
@DirtiesContext
class SpringTransactionTest {

    private static final PostgresSchema SCHEMA = new PostgresSchema(
            "CREATE TABLE stock (item TEXT PRIMARY KEY, total BIGINT NOT NULL)",
            "INSERT INTO stock VALUES ('snack', 0)",
            "CREATE TABLE movement (receipt TEXT PRIMARY KEY, qty INTEGER NOT NULL)");

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", SCHEMA::url);
        registry.add("spring.datasource.username", () -> PostgresSchema.USER);
        registry.add("spring.datasource.hikari.maximum-pool-size", () -> "20");
        registry.add("spring.jpa.hibernate.ddl-auto", () -> "validate");
        registry.add("spring.jpa.open-in-view", () -> "false");
        registry.add("spring.flyway.enabled", () -> "false");
        registry.add("inbox.name", () -> "receipts");
        registry.add("inbox.schema", () -> "create");
        registry.add("inbox.busy-timeout", () -> "30s");
    }

    @AfterAll
    static void dropSchema() {
        SCHEMA.close();
    }

    @Autowired
    ReceiptService service;

    @Autowired
    SpringInbox inbox;

    @Autowired
    JdbcClient jdbc;

    @Autowired
    MovementRepository movements;

    @Autowired
    MeterRegistry meters;

    /** {@code inbox.messages} of this inbox for {@code outcome}, as the metrics count it. */
    private double counted(String outcome) {
        Counter counter = meters.find("inbox.messages").tag("inbox", "receipts").tag("outcome", outcome).counter();
        return counter == null ? 0.0 : counter.count();
    }

    private long stock() {
        return jdbc.sql("SELECT total FROM stock WHERE item = 'snack'").query(Long.class).single();
    }

    private JdbiInbox raw() {
        return inbox.inbox();
    }

    @Test
    void aThrowAfterTheApplyLeavesNothingRecordedWrittenOrCounted() {
        InboxStats before = raw().stats();
        double appliedBefore = counted("applied");
        long stockBefore = stock();

        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> service.receive("rollback-1", 5, true));

        assertEquals("the business failed after the apply", thrown.getMessage());
        assertTrue(raw().find("rollback-1").isEmpty(), "the claim rolled back");
        assertEquals(stockBefore, stock(), "the JdbcClient write rolled back");
        assertTrue(movements.findById("rollback-1").isEmpty(), "the JPA write rolled back");
        assertEquals(before, raw().stats(), "nothing counted");
        assertEquals(appliedBefore, counted("applied"), "nor metered");

        // The redelivery applies: the rollback took the claim with it.
        ReceiptService.Received again = service.receive("rollback-1", 5, false);
        assertInstanceOf(Outcome.Applied.class, again.outcome());
        assertEquals(stockBefore + 5, stock());
    }

    @Test
    void aCommittedApplyIsRecordedWrittenAndCountedOnceAfterTheCommit() {
        InboxStats before = raw().stats();
        double appliedBefore = counted("applied");
        long stockBefore = stock();

        ReceiptService.Received received = service.receive("commit-1", 7, false);

        assertInstanceOf(Outcome.Applied.class, received.outcome());
        assertEquals(before.applied(), received.statsInside().applied(), "not counted before the commit");
        assertEquals(before.applied() + 1, raw().stats().applied(), "counted once after it");
        assertEquals(appliedBefore + 1, counted("applied"), "and metered once");
        assertTrue(raw().find("commit-1").isPresent());
        assertEquals(stockBefore + 7, stock());
        assertEquals(7, movements.findById("commit-1").orElseThrow().qty());

        ReceiptService.Received duplicate = service.receive("commit-1", 7, false);
        assertInstanceOf(Outcome.Duplicate.class, duplicate.outcome());
        assertEquals(stockBefore + 7, stock(), "the duplicate wrote nothing");
        assertEquals(before.applied() + 1, raw().stats().applied());
        assertEquals(before.duplicates() + 1, raw().stats().duplicates());
    }

    @Test
    void outsideATransactionItOpensOneAndTheEffectsWritesShareIt() {
        long stockBefore = stock();
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> inbox.apply("own-1",
                Content.of(3), tx -> {
                    jdbc.sql("UPDATE stock SET total = total + 3 WHERE item = 'snack'").update();
                    throw new IllegalStateException("effect failed");
                }));
        assertEquals("effect failed", thrown.getMessage());
        assertEquals(stockBefore, stock(), "the JdbcClient write rolled back with the claim");
        assertTrue(raw().find("own-1").isEmpty());

        Outcome<Integer> outcome = inbox.apply("own-1", Content.of(3),
                tx -> jdbc.sql("UPDATE stock SET total = total + 3 WHERE item = 'snack'").update());
        assertInstanceOf(Outcome.Applied.class, outcome);
        assertEquals(stockBefore + 3, stock());
    }

    @Test
    void sixteenThreadsPostingTheSameIdsApplyEachOnce() throws Exception {
        int threads = 16;
        int ids = 40;
        InboxStats before = raw().stats();
        long stockBefore = stock();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> applied = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Callable<Integer> poster = () -> {
                    start.await();
                    int mine = 0;
                    for (int i = 0; i < ids; i++) {
                        if (service.receive("same-" + i, i + 1, false).outcome() instanceof Outcome.Applied) {
                            mine++;
                        }
                    }
                    return mine;
                };
                applied.add(pool.submit(poster));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : applied) {
                total += f.get(2, TimeUnit.MINUTES);
            }
            assertEquals(ids, total, "one Applied per id");
        } finally {
            pool.shutdownNow();
        }
        long expected = 0;
        for (int i = 0; i < ids; i++) {
            expected += i + 1;
            assertEquals(i + 1, movements.findById("same-" + i).orElseThrow().qty());
        }
        assertEquals(stockBefore + expected, stock(), "each id's effect once");
        InboxStats after = raw().stats();
        assertEquals(before.applied() + ids, after.applied());
        assertEquals(before.duplicates() + (long) ids * (threads - 1), after.duplicates());
        assertEquals(before.failed() + before.busy(), after.failed() + after.busy());
    }
}
