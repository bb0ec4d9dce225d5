package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.Outcome;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * New ids into an empty inbox and into one already holding {@code rows} rows (10 million by
 * default). The stored ids are spread evenly over the key space and the new ones are random, so
 * every claim lands between stored keys, as real ids do. The file is filled once per trial, before
 * warm-up, in one transaction, and synced; its setup takes minutes.
 *
 * <p>{@link #inbox} runs the two sizes one after the other, one trial each, so that a profiler can
 * charge each its own costs. {@link #paired} interleaves them call by call, each on its own file
 * on the same disk, as {@link PairedBenchmark} does with the baseline: its counters {@code
 * emptyNanos} and {@code prefilledNanos} are each side's time, so their quotient is the rate ratio,
 * free of whatever the disk did between two trials.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class PrefilledBenchmark {

    @State(Scope.Benchmark)
    public static class Database extends SqliteState {

        @Param({"0", "10000000"})
        public long rows;

        @Param({"DISK"})
        public Location location;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            open(location, rows, row -> Ids.spread(row, rows));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            close();
        }
    }

    /** An empty inbox and a prefilled one, each on its own file, and which goes first next. */
    @State(Scope.Benchmark)
    public static class Databases {

        @Param({"10000000"})
        public long rows;

        @Param({"DISK"})
        public Location location;

        final Side empty = new Side();
        final Side prefilled = new Side();
        private boolean emptyFirst;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            prefilled.open(location, rows, row -> Ids.spread(row, rows));
            empty.open(location, 0, null);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            try {
                prefilled.close();
            } finally {
                empty.close();
            }
        }
    }

    static final class Side extends SqliteState {
    }

    /** Time spent on each side in the current iteration, in nanoseconds. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class SideTimes {
        public long emptyNanos;
        public long prefilledNanos;

        @Setup(Level.Iteration)
        public void reset() {
            emptyNanos = 0;
            prefilledNanos = 0;
        }
    }

    @Benchmark
    public Outcome<Integer> inbox(Database db) {
        return db.inboxApply(db.nextId());
    }

    @Benchmark
    public boolean paired(Databases db, SideTimes times) {
        db.emptyFirst = !db.emptyFirst;
        if (db.emptyFirst) {
            return timeEmpty(db, times) & timePrefilled(db, times);
        }
        return timePrefilled(db, times) & timeEmpty(db, times);
    }

    private static boolean timeEmpty(Databases db, SideTimes times) {
        long start = System.nanoTime();
        boolean applied = db.empty.inboxApply(db.empty.nextId()).isNewlyApplied();
        times.emptyNanos += System.nanoTime() - start;
        return applied;
    }

    private static boolean timePrefilled(Databases db, SideTimes times) {
        long start = System.nanoTime();
        boolean applied = db.prefilled.inboxApply(db.prefilled.nextId()).isNewlyApplied();
        times.prefilledNanos += System.nanoTime() - start;
        return applied;
    }
}
