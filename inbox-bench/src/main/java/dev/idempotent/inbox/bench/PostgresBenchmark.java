package dev.idempotent.inbox.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
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
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Single apply on PostgreSQL, new ids, with 1 and 8 threads: the inbox and the hand-written JDBC
 * transaction interleaved call by call on every thread (alternating which goes first), as in
 * {@link PairedBenchmark}, so both sides see the same load. The score is pairs per second; the
 * counters {@code inboxNanos} and {@code jdbcNanos} are each side's time, summed over threads, so
 * their quotient is the rate ratio. With {@code effect=PREPARED} the inbox's effect prepares its
 * statement by name as the baseline does, instead of going through Jdbi; with {@code
 * baseline=WITH_SETTINGS} the baseline begins its transaction as the inbox does, with its settings,
 * so that the pair shows what the inbox costs beyond them. {@link SideTimes} also
 * splits each side's time into CPU on the calling thread, CPU in the server and waiting.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PostgresBenchmark {

    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    @State(Scope.Benchmark)
    public static class Database extends PostgresState {

        /** The inbox's effect written with Jdbi, as in the README, or as the baseline writes it. */
        @Param({"JDBI", "PREPARED"})
        public String effect = "JDBI";

        /** The baseline as is, or sending the inbox's isolation level and lock timeout in front of its claim. */
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

    /**
     * Where each side's time went in the current iteration, in nanoseconds: wall time and this
     * thread's CPU time during its calls, summed by JMH over threads; and the CPU time of the server
     * processes behind each side's pool, read by the first thread only (and zero when the server
     * runs on another machine). What is neither is waiting: on the network, the scheduler and the
     * server's WAL sync.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class SideTimes {
        public long inboxNanos;
        public long jdbcNanos;
        public long inboxCpuNanos;
        public long jdbcCpuNanos;
        public long inboxServerNanos;
        public long jdbcServerNanos;
        private boolean inboxFirst;
        private boolean readsServer;
        private long inboxServerAtStart;
        private long jdbcServerAtStart;

        @Setup(Level.Iteration)
        public void readServerBefore(Database db, ThreadParams thread) throws SQLException {
            // JMH zeroes the public counters after this method, so the readings go to fields of our own.
            readsServer = thread.getThreadIndex() == 0;
            if (readsServer) {
                inboxServerAtStart = db.inboxServerCpuNanos();
                jdbcServerAtStart = db.jdbcServerCpuNanos();
            }
        }

        @TearDown(Level.Iteration)
        public void readServerAfter(Database db) throws SQLException {
            if (readsServer) {
                inboxServerNanos = db.inboxServerCpuNanos() - inboxServerAtStart;
                jdbcServerNanos = db.jdbcServerCpuNanos() - jdbcServerAtStart;
            }
        }
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

    private static boolean timeInbox(Database db, SideTimes times) throws SQLException {
        long start = System.nanoTime();
        long cpuStart = CPU.getCurrentThreadCpuTime();
        String id = db.nextId();
        boolean applied = ("PREPARED".equals(db.effect) ? db.inboxApplyPrepared(id) : db.inboxApply(id))
                .isNewlyApplied();
        times.inboxCpuNanos += CPU.getCurrentThreadCpuTime() - cpuStart;
        times.inboxNanos += System.nanoTime() - start;
        return applied;
    }

    private static boolean timeJdbc(Database db, SideTimes times) throws SQLException {
        long start = System.nanoTime();
        long cpuStart = CPU.getCurrentThreadCpuTime();
        boolean applied = "WITH_SETTINGS".equals(db.baseline)
                ? db.jdbc().applyWithSettings(db.nextId(), SqliteState.QUANTITY)
                : db.jdbc().apply(db.nextId(), SqliteState.QUANTITY);
        times.jdbcCpuNanos += CPU.getCurrentThreadCpuTime() - cpuStart;
        times.jdbcNanos += System.nanoTime() - start;
        return applied;
    }
}
