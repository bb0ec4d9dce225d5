package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.jdbi.JdbiResultInbox;
import dev.idempotent.inbox.testkit.MutableClock;
import dev.idempotent.inbox.testkit.ResultEdgeContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tries to make a stored result lie on PostgreSQL: the {@link ResultEdgeContract}, the concurrent
 * first applies under each isolation level a caller may use, and what only this database's tests
 * cover (type names the driver cannot write, purges racing duplicates).
 */
class PostgresResultAttackTest extends ResultEdgeContract<PostgresFixture> {

    @Override
    protected PostgresFixture openFixture() {
        return new PostgresFixture();
    }

    /**
     * Twelve threads apply the same three ids, each in a caller transaction of the given level and
     * each returning a result of its own: every duplicate carries exactly the result of the one call
     * that applied the id, never none and never its own.
     */
    @ParameterizedTest
    @EnumSource(value = TransactionIsolationLevel.class, names = {"READ_COMMITTED", "REPEATABLE_READ", "SERIALIZABLE"})
    void concurrentFirstAppliesGiveEveryDuplicateTheWinnersResult(TransactionIsolationLevel level) throws Exception {
        assertEveryDuplicateCarriesTheWinnersResult((inbox, call) -> inbox.jdbi().inTransaction(level, call));
    }

    /**
     * A type name with an unpaired surrogate cannot be written as UTF-8: the driver would store a
     * '?' in its place, and every duplicate would then find a result "of another type", its own
     * codec's answer refused for the whole retention. Such a name is refused when the view is made.
     */
    @Test
    void aTypeNameWithAnUnpairedSurrogateIsRefusedBeforeAnythingIsStored() {
        for (String type : List.of("orders.\uD83D", "\uDCE6orders", "orders.\uDCE6\uD83D")) {
            assertThrows(IllegalArgumentException.class, () -> inbox.storingResults(ResultCodec.bytes(type, 1)), type);
        }
        assertTrue(inbox.find("s").isEmpty());
    }

    /**
     * Purges racing applies of one id: every duplicate carries the result of some call that
     * applied the id (the row it met), never none and never its own.
     */
    @Test
    void purgesRacingDuplicatesNeverGiveADuplicateAResultNoCallApplied() throws Exception {
        MutableClock clock = new MutableClock(Instant.parse("2026-01-05T10:00:00Z"));
        try (PostgresInbox racing = fixture.builder().name("racing").clock(clock)
                .retention(Duration.ofDays(1)).build()) {
            JdbiResultInbox<byte[]> results = racing.storingResults(BYTES);
            Set<String> applied = ConcurrentHashMap.newKeySet();
            List<String> duplicates = new CopyOnWriteArrayList<>();
            int appliers = 4;
            int calls = 40;
            CyclicBarrier start = new CyclicBarrier(appliers + 1);
            ExecutorService pool = Executors.newFixedThreadPool(appliers + 1);
            List<Future<?>> done = new ArrayList<>();
            try {
                for (int t = 0; t < appliers; t++) {
                    int thread = t;
                    done.add(pool.submit(() -> {
                        start.await(30, TimeUnit.SECONDS);
                        for (int n = 0; n < calls; n++) {
                            String mine = thread + "-" + n;
                            Outcome<byte[]> outcome = results.apply("p", Content.of(1), tx -> utf8(mine));
                            if (outcome instanceof Outcome.Applied<byte[]>) {
                                applied.add(mine);
                            } else {
                                Outcome.Duplicate<byte[]> duplicate = assertInstanceOf(Outcome.Duplicate.class, outcome);
                                String carried = new String(duplicate.result().value(), StandardCharsets.UTF_8);
                                assertFalse(carried.equals(mine), "a duplicate carries another call's result");
                                duplicates.add(carried);
                            }
                        }
                        return null;
                    }));
                }
                done.add(pool.submit(() -> {
                    start.await(30, TimeUnit.SECONDS);
                    for (int n = 0; n < 20; n++) {
                        clock.advance(Duration.ofDays(2));
                        racing.retention().purge();
                    }
                    return null;
                }));
                for (Future<?> future : done) {
                    future.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertFalse(applied.isEmpty());
            for (String carried : duplicates) {
                assertTrue(applied.contains(carried), "the duplicate's result " + carried + " is one an applied call stored");
            }
            assertEquals(appliers * calls, applied.size() + duplicates.size());
        }
    }
}
