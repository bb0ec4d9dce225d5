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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Single apply on MariaDB, new ids, with 1 and 8 threads, paired as {@link PostgresBenchmark} is:
 * the inbox and the hand-written JDBC transaction ({@link HandWrittenMariaDb}) interleaved call by
 * call on every thread, alternating which goes first, so both sides see the same load. The score
 * is pairs per second; the counters {@code inboxNanos} and {@code jdbcNanos} are each side's time,
 * summed over threads, so their quotient is the rate ratio. With {@code baseline=WITH_SETTINGS}
 * the baseline also sends the statements the inbox adds to each transaction (isolation level, lock
 * wait timeout, the savepoint around the effect), so that the pair shows what the inbox costs
 * beyond them.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class MariaDbBenchmark {

    @State(Scope.Benchmark)
    public static class Database extends MariaDbState {

        /** The baseline as is, or sending the statements the inbox adds to each transaction. */
        @Param({"PLAIN", "WITH_SETTINGS"})
        public String baseline = "PLAIN";

        @Setup(Level.Trial)
        public void setUp() throws SQLException {
            open();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    /** Each side's wall time in the current iteration, in nanoseconds, summed by JMH over threads. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class SideTimes {
        public long inboxNanos;
        public long jdbcNanos;
        private boolean inboxFirst;
    }

    @Benchmark
    @Threads(1)
    public boolean paired01(Database db, SideTimes times) throws SQLException {
        return pair(db, times);
    }

    @Benchmark
    @Threads(8)
    public boolean paired08(Database db, SideTimes times) throws SQLException {
        return pair(db, times);
    }

    static boolean pair(Database db, SideTimes times) throws SQLException {
        times.inboxFirst = !times.inboxFirst;
        if (times.inboxFirst) {
            return timeInbox(db, times) & timeJdbc(db, times);
        }
        return timeJdbc(db, times) & timeInbox(db, times);
    }

    private static boolean timeInbox(Database db, SideTimes times) {
        long start = System.nanoTime();
        boolean applied = db.inboxApply(db.nextId()).isNewlyApplied();
        times.inboxNanos += System.nanoTime() - start;
        return applied;
    }

    private static boolean timeJdbc(Database db, SideTimes times) throws SQLException {
        long start = System.nanoTime();
        boolean applied = "WITH_SETTINGS".equals(db.baseline)
                ? db.jdbc().applyWithSettings(db.nextId(), SqliteState.QUANTITY)
                : db.jdbc().apply(db.nextId(), SqliteState.QUANTITY);
        times.jdbcNanos += System.nanoTime() - start;
        return applied;
    }
}
