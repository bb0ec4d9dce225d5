package dev.idempotent.inbox.testkit;

import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** What the property classes of this package generate their inputs from, and how they name examples. */
final class Generators {

    /**
     * Shrink steps after a failure. Every step runs the property once more against the database,
     * so the library's default (a hundred per example) would keep a failing run going for hours.
     */
    static final int SHRINK_CYCLES = 200;

    /** Few ids, so that most sequences deliver some id twice, with the same or another quantity. */
    static final List<String> IDS = List.of("m-0", "m-1", "m-2", "m-3");

    private static final AtomicInteger EXAMPLES = new AtomicInteger();

    private Generators() {}

    /** An id of the small alphabet; shrinks towards {@code m-0}. */
    static Gen<String> ids() {
        return Generate.pick(IDS);
    }

    /** A quantity from 1 to 3: few enough that a second delivery often offers the first one again. */
    static Gen<Long> quantities() {
        return longs().between(1, 3);
    }

    /**
     * An id, a quantity and whether the effect throws when it runs: about one attempt in three
     * fails.
     */
    static Gen<Attempt> attempts() {
        return ids().zip(quantities(), integers().between(0, 2), (id, qty, dice) -> new Attempt(id, qty, dice == 0));
    }

    /**
     * A name no other example of this JVM has, for an inbox and its stock row: examples share a
     * database, and an example replayed while shrinking must start from nothing.
     */
    static String uniqueName(String prefix) {
        return prefix + "-" + EXAMPLES.incrementAndGet();
    }

    /** One delivery whose effect, if it runs, may be planned to throw. */
    record Attempt(String id, long qty, boolean effectFails) {}

    /** The exception a planned failure throws: checked, so that it must reach the caller unchanged. */
    static final class PlannedFailure extends Exception {

        PlannedFailure(Attempt attempt) {
            super("planned failure of " + attempt, null, false, false);
        }
    }
}
