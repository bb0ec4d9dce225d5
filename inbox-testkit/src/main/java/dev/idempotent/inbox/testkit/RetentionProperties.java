package dev.idempotent.inbox.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.StaleMessageException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * The retention invariants under a random clock: random sequences of clock advances, sends with
 * an origin time, purges and restarts, checked step by step against a model of what the inbox
 * must keep. Subclass it in the adapter's tests and implement {@link #openFixture()}.
 *
 * <p>The sender creates each business (an id of {@code m-0} to {@code m-3}, with a quantity fixed
 * per id) once, with an origin time some minutes to days before it first sends it, and resends
 * it with that same origin time. Times move in whole hours against a retention of a day and a
 * skew margin of ten minutes, so that receive times and origin times often fall exactly on the
 * purge cutoff and the stale boundary.
 *
 * <p>Inputs, isolation and replaying a failure by its seed are as in {@link InboxProperties}.
 */
public abstract class RetentionProperties {

    private static final Instant T0 = Instant.parse("2026-01-05T10:00:00Z");
    private static final Duration RETENTION = Duration.ofHours(24);
    private static final Duration SKEW = Duration.ofMinutes(10);

    private InboxFixture fixture;

    /**
     * A fixture over a fresh, real database; closed after each property.
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

    /** One step of a scenario. */
    sealed interface Step permits Advance, Send, Purge, Restart {}

    /** The clock moves forward. */
    record Advance(int hours) implements Step {}

    /**
     * The sender sends an id: the first time, it created the business {@code lagMinutes} before;
     * every later time it resends with that origin time.
     */
    record Send(String id, int lagMinutes) implements Step {}

    /** A purge runs. */
    record Purge() implements Step {}

    /** The inbox is closed and built again over the same database, as a restarted process. */
    record Restart() implements Step {}

    private static Gen<List<Step>> scenarios() {
        // Steps that often add up to exactly the retention, so rows fall on the purge cutoff.
        Gen<Integer> hours = Generate.pick(List.of(0, 1, 6, 12, 23, 24, 25)).mix(integers().between(0, 48), 20);
        Gen<Step> advance = hours.map(Advance::new);
        // Around the lags that put a first delivery at the stale boundary: R - skew, R, R + 1 h.
        Gen<Integer> lags = Generate.pick(List.of(0, 50, 60, 1430, 1440, 1500, 3000));
        Gen<Step> send = Generators.ids().zip(lags, Send::new);
        Gen<Step> purge = Generate.constant(new Purge());
        Gen<Step> restart = Generate.constant(new Restart());
        Gen<Step> step = Generate.frequency(List.of(
                Pair.of(4, send), Pair.of(3, advance), Pair.of(2, purge), Pair.of(1, restart)));
        return lists().of(step).ofSizeBetween(1, 40);
    }

    /**
     * Under any sequence of clock advances, sends, purges and restarts: a purge deletes exactly
     * the rows received before {@code now - retention}, so no row younger than the horizon goes;
     * the horizon it reports is the latest cutoff and survives restarts; a send of a stored id is
     * a Duplicate however old its origin time; a send of an id not stored is refused as Stale
     * exactly when {@code originTime - skew} is before the horizon, and Applied otherwise. So a
     * resend whose first delivery was purged is never Applied a second time: each id is applied at
     * most once, and the total is the sum of qty over the ids applied.
     */
    @Test
    void purgesAndResendsUnderARandomClockNeverApplyAnIdTwice() {
        qt().withExamples(40).withShrinkCycles(Generators.SHRINK_CYCLES)
                .forAll(scenarios())
                .checkAssert(this::run);
    }

    private void run(List<Step> steps) {
        Model model = new Model(Generators.uniqueName("retention"));
        try {
            for (int i = 0; i < steps.size(); i++) {
                Step step = steps.get(i);
                String where = "step " + i + " " + step + " at " + model.clock.instant();
                if (step instanceof Advance advance) {
                    model.clock.advance(Duration.ofHours(advance.hours()));
                } else if (step instanceof Send send) {
                    model.send(send, where);
                } else if (step instanceof Purge) {
                    model.purge(where);
                } else {
                    model.inbox.close();
                    model.inbox = model.open();
                }
            }
            model.checkTotals();
        } finally {
            model.inbox.close();
        }
    }

    /** What the inbox must hold, and the inbox under test. */
    private final class Model {
        final String name;
        final Stock stock;
        final MutableClock clock = new MutableClock(T0);
        final AtomicInteger effects = new AtomicInteger();
        /** The origin time of each business the sender created so far. */
        final Map<String, Instant> origins = new HashMap<>();
        /** The rows the inbox must still hold: id and receive time. */
        final Map<String, Instant> stored = new HashMap<>();
        /** How often each id was Applied. */
        final Map<String, Integer> appliedTimes = new HashMap<>();
        Optional<Instant> horizon = Optional.empty();
        Inbox<Handle> inbox;

        Model(String name) {
            this.name = name;
            this.stock = Stock.create(fixture.jdbi(), name);
            this.inbox = open();
        }

        Inbox<Handle> open() {
            return fixture.builder().name(name).retention(RETENTION).clockSkewMargin(SKEW).clock(clock).build();
        }

        void send(Send send, String where) {
            Instant now = clock.instant();
            Instant origin = origins.computeIfAbsent(send.id(), id -> now.minus(Duration.ofMinutes(send.lagMinutes())));
            long qty = qty(send.id());
            Outcome<Integer> outcome;
            try {
                outcome = inbox.apply(send.id(), Content.of(qty), origin, tx -> {
                    effects.incrementAndGet();
                    return stock.add(tx, qty);
                });
            } catch (StaleMessageException stale) {
                assertFalse(stored.containsKey(send.id()), where + ": a stored id is a Duplicate, never Stale");
                assertTrue(horizon.isPresent() && origin.minus(SKEW).isBefore(horizon.get()),
                        where + ": refused as Stale with origin " + origin + " and horizon " + horizon);
                assertEquals(horizon.get(), stale.horizon(), where);
                assertEquals(appliedTimes.size(), effects.get(), where + ": a Stale refusal runs no effect");
                assertTrue(inbox.find(send.id()).isEmpty(), where + ": a Stale refusal records nothing");
                return;
            }
            Instant received = stored.get(send.id());
            if (received != null) {
                Outcome.Duplicate<?> duplicate = assertInstanceOf(Outcome.Duplicate.class, outcome, where);
                assertEquals(received, duplicate.firstReceivedAt(), where);
            } else {
                assertTrue(horizon.isEmpty() || !origin.minus(SKEW).isBefore(horizon.get()),
                        where + ": applied with origin " + origin + " though the horizon is " + horizon);
                Outcome.Applied<?> applied = assertInstanceOf(Outcome.Applied.class, outcome, where);
                assertEquals(now, applied.receivedAt(), where);
                stored.put(send.id(), now);
                int times = appliedTimes.merge(send.id(), 1, Integer::sum);
                assertEquals(1, times, where + ": " + send.id() + " applied a second time");
            }
            assertEquals(appliedTimes.size(), effects.get(), where + ": the effect runs only for Applied");
        }

        void purge(String where) {
            Instant cutoff = clock.instant().minus(RETENTION);
            long expiring = stored.values().stream().filter(received -> received.isBefore(cutoff)).count();

            PurgeReport report = inbox.retention().purge();

            horizon = Optional.of(horizon.filter(h -> h.isAfter(cutoff)).orElse(cutoff));
            assertEquals(horizon.get(), report.horizon(), where + ": the horizon is the latest cutoff");
            assertEquals(expiring, report.rowsPurged(), where + ": rows received before " + cutoff);
            stored.values().removeIf(received -> received.isBefore(cutoff));
            // One query for all ids rather than a find() each: on PostgreSQL each is a connection.
            List<String> kept = fixture.jdbi().withHandle(handle -> handle
                    .createQuery("SELECT id FROM " + fixture.tables().messageTable() + " WHERE inbox = ?")
                    .bind(0, name)
                    .mapTo(String.class)
                    .list());
            assertEquals(new TreeSet<>(stored.keySet()), new TreeSet<>(kept),
                    where + ": exactly the rows received at or after the cutoff " + cutoff + " are kept: " + stored);
        }

        void checkTotals() {
            long expected = appliedTimes.keySet().stream().mapToLong(RetentionProperties::qty).sum();
            assertEquals(expected, stock.total(), "total = sum of qty over the ids applied");
            assertEquals(appliedTimes.size(), effects.get(), "the effect ran once per id applied");
        }
    }

    /** The quantity of a business is part of it: every resend of an id offers the same one. */
    private static long qty(String id) {
        return Generators.IDS.indexOf(id) + 1;
    }
}
