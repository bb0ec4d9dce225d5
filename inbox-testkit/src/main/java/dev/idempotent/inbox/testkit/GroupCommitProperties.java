package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.testkit.Generators.Attempt;
import dev.idempotent.inbox.testkit.Generators.PlannedFailure;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The invariant of group commit, where one transaction holds the work of many concurrent callers
 * and each caller's work runs in a savepoint of its own: a caller whose effect throws gets its own
 * exception back and records nothing, and never takes the others of its group down with it.
 * Subclass it in the adapter's tests with a fixture whose {@link InboxFixture#builder()} builds
 * group-committing inboxes (SQLite always does; PostgreSQL with its group-commit builder).
 *
 * <p>Inputs, isolation and replaying a failure by its seed are as in {@link InboxProperties}.
 */
public abstract class GroupCommitProperties {

    private static final int THREADS = 8;
    /**
     * A short group wait gathers the callers into larger groups, so failures share transactions
     * with successes.
     */
    private static final Duration GROUP_WAIT = Duration.ofMillis(2);
    /** A loaded machine must not make callers give up: being busy is not what this is about. */
    private static final Duration BUSY_TIMEOUT = Duration.ofSeconds(60);

    private InboxFixture fixture;

    /**
     * A fixture over a fresh, real database whose builder builds group-committing inboxes.
     *
     * @return the fixture
     * @throws Exception if the database cannot be set up
     */
    protected abstract InboxFixture openFixture() throws Exception;

    @BeforeEach
    void openDatabase() throws Exception {
        fixture = openFixture();
    }

    @AfterEach
    void closeDatabase() {
        fixture.close();
    }

    /**
     * Eight threads call {@code apply} at once, each with its share of up to 32 attempts, where
     * about a third of the effects throw when they run. A caller whose effect ran and threw gets
     * that very exception; every other caller gets an outcome; per id exactly one call is Applied
     * unless every call of it failed, the others being Duplicate or Conflict against the applied
     * quantity; nothing of a failed call is recorded: the total is the sum of qty over the ids
     * applied, one inbox row each.
     */
    @Test
    void failingEffectsInAGroupFailAloneAndTheOthersCommit() {
        qt().withExamples(15).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(lists().of(Generators.attempts()).ofSizeBetween(1, 32))
                .checkAssert(this::applyConcurrently);
    }

    private void applyConcurrently(List<Attempt> attempts) {
        String name = Generators.uniqueName("group");
        Stock stock = Stock.create(fixture.jdbi(), name);
        AtomicInteger completedEffects = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(THREADS);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<PlannedFailure> failures = attempts.stream().map(PlannedFailure::new).toList();

        try (Inbox<Handle> inbox = fixture.builder().name(name).maxGroupWait(GROUP_WAIT).busyTimeout(BUSY_TIMEOUT).build()) {
            List<Future<Map<Integer, Object>>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    start.await();
                    Map<Integer, Object> answers = new HashMap<>();
                    for (int i = thread; i < attempts.size(); i += THREADS) {
                        Attempt attempt = attempts.get(i);
                        PlannedFailure failure = failures.get(i);
                        try {
                            answers.put(i, inbox.apply(attempt.id(), Content.of(attempt.qty()), tx -> {
                                if (attempt.effectFails()) {
                                    throw failure;
                                }
                                int updated = stock.add(tx, attempt.qty());
                                completedEffects.incrementAndGet();
                                return updated;
                            }));
                        } catch (PlannedFailure thrown) {
                            answers.put(i, thrown);
                        }
                    }
                    return answers;
                }));
            }
            Map<Integer, Object> answers = new HashMap<>();
            for (Future<Map<Integer, Object>> result : results) {
                answers.putAll(Concurrency.get(result));
            }

            Map<String, Long> appliedQty = new HashMap<>();
            int failed = 0;
            for (int i = 0; i < attempts.size(); i++) {
                Attempt attempt = attempts.get(i);
                Object answer = answers.get(i);
                if (answer instanceof PlannedFailure thrown) {
                    assertSame(failures.get(i), thrown, "the caller gets its own exception, for " + attempt);
                    failed++;
                } else if (answer instanceof Outcome.Applied<?>) {
                    assertFalse(attempt.effectFails(), "an effect that throws never commits: " + attempt);
                    Long previous = appliedQty.put(attempt.id(), attempt.qty());
                    assertNull(previous, "id " + attempt.id() + " applied twice");
                }
            }
            for (int i = 0; i < attempts.size(); i++) {
                Attempt attempt = attempts.get(i);
                Object answer = answers.get(i);
                Long applied = appliedQty.get(attempt.id());
                if (applied == null) {
                    assertTrue(answer instanceof PlannedFailure,
                            "no call applied " + attempt.id() + ", so every call of it ran its effect and failed: "
                                    + attempt + " got " + answer);
                } else if (!(answer instanceof PlannedFailure) && !(answer instanceof Outcome.Applied<?>)) {
                    Class<?> expected = applied == attempt.qty() ? Outcome.Duplicate.class : Outcome.Conflict.class;
                    assertEquals(expected, answer.getClass(), "outcome of " + attempt);
                }
                if (answer instanceof PlannedFailure) {
                    assertTrue(attempt.effectFails(), "only a planned failure fails: " + attempt);
                }
            }
            assertEquals(appliedQty.values().stream().mapToLong(Long::longValue).sum(), stock.total(),
                    "total = sum of qty over the distinct ids applied");
            assertEquals(appliedQty.size(), completedEffects.get());
            assertEquals(appliedQty.size(), Stock.inboxRows(fixture, name), "a failed call recorded nothing");
            for (String id : Generators.IDS) {
                assertEquals(appliedQty.containsKey(id), inbox.find(id).isPresent(), "record of " + id);
            }
            assertEquals(attempts.size(), inbox.stats().attempts());
            assertEquals(failed, inbox.stats().failed());
            assertEquals(0, inbox.stats().busy());
        } finally {
            pool.shutdownNow();
        }
    }
}
