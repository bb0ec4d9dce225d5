package dev.idempotent.inbox.bench;

import java.sql.SQLException;
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
 * The inbox and the hand-written baseline interleaved call by call, each on its own file on the
 * same disk, so both see the same disk and CPU load at the same moments. Benchmarks that run one
 * side after the other are at the mercy of whatever else the machine does in between; this one is
 * not. The score is pairs per second; the counters {@code inboxNanos} and {@code jdbcNanos} are
 * each side's time per iteration, so their quotient is the rate ratio (both sides do the same
 * number of calls). The order alternates, so neither side always follows the other's sync.
 *
 * <p>{@code pair} picks the two sides: the README-style inbox against the baseline, and the two
 * variants that explain the gap (the inbox with an effect that reuses its prepared statement; the
 * baseline preparing every statement afresh), and the prepared-effect inbox against a baseline that
 * keeps the driver's default generated-key query after each INSERT.
 *
 * <p>{@link #batches} pairs the same way {@code applyAll} with {@code size} messages against the
 * hand-written batch of the same size; its score is pairs of batches per second.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
public class PairedBenchmark {

    /** One side's file: the inbox or the baseline, never both on one file. */
    static final class Side extends SqliteState {
    }

    /** Two databases of the same kind, one per side, and which side goes first next. */
    @State(Scope.Benchmark)
    public abstract static class Pair {

        @Param({"DISK", "TMPFS"})
        public Location location;

        final Side inboxSide = new Side();
        final Side jdbcSide = new Side();
        private boolean inboxFirst;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            inboxSide.open(location, 0, null);
            jdbcSide.open(location, 0, null);
        }

        boolean inboxFirst() {
            inboxFirst = !inboxFirst;
            return inboxFirst;
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            try {
                inboxSide.close();
            } finally {
                jdbcSide.close();
            }
        }
    }

    @State(Scope.Benchmark)
    public static class Databases extends Pair {

        @Param({"INBOX_VS_JDBC", "PREPARED_EFFECT_VS_JDBC", "INBOX_VS_UNPREPARED_JDBC",
                "PREPARED_EFFECT_VS_DRIVER_DEFAULT_JDBC"})
        public String pair;
    }

    @State(Scope.Benchmark)
    public static class BatchDatabases extends Pair {

        @Param({"10", "100", "1000"})
        public int size;

        /** How the inbox's effect is written: with Jdbi as in the README, or reusing a prepared statement. */
        @Param({"JDBI", "PREPARED"})
        public String effect;

        /** The hand-written batch as is, or with a savepoint around each message as {@code applyAll} has. */
        @Param({"PLAIN", "SAVEPOINTS"})
        public String baseline;
    }

    /** Time spent on each side in the current iteration, in nanoseconds. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class SideTimes {
        public long inboxNanos;
        public long jdbcNanos;

        @Setup(Level.Iteration)
        public void reset() {
            inboxNanos = 0;
            jdbcNanos = 0;
        }
    }

    @Benchmark
    public boolean newIds(Databases db, SideTimes times) throws SQLException {
        boolean applied;
        if (db.inboxFirst()) {
            applied = timeInbox(db, times) & timeJdbc(db, times);
        } else {
            applied = timeJdbc(db, times) & timeInbox(db, times);
        }
        return applied;
    }

    private static boolean timeInbox(Databases db, SideTimes times) throws SQLException {
        long start = System.nanoTime();
        String id = db.inboxSide.nextId();
        boolean applied = db.pair.startsWith("PREPARED_EFFECT")
                ? db.inboxSide.inboxApplyPreparedEffect(id).isNewlyApplied()
                : db.inboxSide.inboxApply(id).isNewlyApplied();
        times.inboxNanos += System.nanoTime() - start;
        return applied;
    }

    private static boolean timeJdbc(Databases db, SideTimes times) throws SQLException {
        db.jdbcSide.jdbc().driverGeneratedKeys(db.pair.endsWith("DRIVER_DEFAULT_JDBC"));
        long start = System.nanoTime();
        String id = db.jdbcSide.nextId();
        boolean applied = db.pair.endsWith("UNPREPARED_JDBC")
                ? db.jdbcSide.jdbc().applyUnprepared(id, SqliteState.QUANTITY)
                : db.jdbcSide.jdbc().apply(id, SqliteState.QUANTITY);
        times.jdbcNanos += System.nanoTime() - start;
        return applied;
    }

    @Benchmark
    public int batches(BatchDatabases db, SideTimes times) throws SQLException {
        int applied = 0;
        boolean inboxFirst = db.inboxFirst();
        for (int side = 0; side < 2; side++) {
            long start = System.nanoTime();
            if ((side == 0) == inboxFirst) {
                applied += db.inboxSide.inboxApplyAll(db.inboxSide.nextIds(db.size), "PREPARED".equals(db.effect));
                times.inboxNanos += System.nanoTime() - start;
            } else {
                applied += db.jdbcSide.jdbc().applyBatch(db.jdbcSide.nextIds(db.size), SqliteState.QUANTITY,
                        "SAVEPOINTS".equals(db.baseline));
                times.jdbcNanos += System.nanoTime() - start;
            }
        }
        return applied;
    }
}
