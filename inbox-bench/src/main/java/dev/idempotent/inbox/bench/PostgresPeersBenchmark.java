package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.bench.PostgresPeers.Side;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * The inbox against what a user would use instead on PostgreSQL ({@link PostgresPeers}), new ids,
 * with 1 and 8 threads, in a database of the run's own with {@code synchronous_commit} on or off.
 * Every invocation applies one message through each side, in an order shuffled round by round, so
 * all sides see the same load, the same warm-up and the same machine. The score is
 * rounds per second.
 *
 * <p>By default each of the inbox, Spring Integration and Camel runs in a fork of its own beside
 * the hand-written side, and its ratio is to the hand-written side of its own fork. Run together
 * (as {@code -p sides=JDBC+INBOX+SPRING_INTEGRATION+CAMEL} still does), each side ran with the
 * others' code and connections taking turns in the CPU's caches: Spring Integration and Camel
 * share Spring's JDBC code, the inbox shares none, and the inbox's ratio then moved with the mix
 * by 0.1 and more, which no application running one of them sees.
 *
 * <p>The counters are summed by JMH over threads, per side: {@code <side>Wall}, the side's time in
 * nanoseconds, so that {@code jdbcWall / inboxWall} is the inbox's rate as a fraction of the
 * hand-written one; {@code <side>Cpu}, the CPU time of the calling threads during the side's calls;
 * and {@code <side>Server}, read by the first thread only, the CPU time of the server processes
 * behind the side's pool. What is neither CPU is waiting: on loopback, the scheduler, the WAL.
 * {@code sleeps} counts how often the calling threads blocked, all sides together: with one side
 * alone, the waits for an answer per call.
 *
 * <p>{@code -p sides=INBOX} (or any subset joined with {@code +}) runs only those sides, for a
 * profile of one; {@code JDBC_WITH_SETTINGS}, {@code INBOX_ROW} and {@code INBOX_ROW_WITH_SETTINGS}
 * take the difference between the hand-written side and the inbox apart.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
// A heap of fixed size, touched at start: a heap still growing during the run would charge each
// side page faults in proportion to what it allocates, which a long-running service does not pay.
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
// 30 s of warm-up: with 10 s the rates still rose through the measured iterations, most for the
// side with the most code to compile (the inbox, through Jdbi), which a long-running service has
// compiled long before.
@Warmup(iterations = 10, time = 3)
@Measurement(iterations = 5, time = 3)
public class PostgresPeersBenchmark {

    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    private static final int SIDES = Side.values().length;
    // Enough for 8 threads; seven pools of it stay well inside PostgreSQL's default 100 connections.
    private static final int POOL_SIZE = 10;

    @State(Scope.Benchmark)
    public static class Database {

        @Param({"on", "off"})
        public String synchronousCommit = "on";

        @Param({"JDBC+INBOX", "JDBC+SPRING_INTEGRATION", "JDBC+CAMEL"})
        public String sides = "JDBC+INBOX";

        PostgresPeers peers;
        PostgresPeers.Applier[] appliers;
        Side[] chosen;
        private final AtomicLong sequence = new AtomicLong();
        private final long seed = ByteBuffer.wrap(new SecureRandom().generateSeed(8)).getLong();

        @Setup(Level.Trial)
        public void setUp() throws SQLException {
            peers = new PostgresPeers(synchronousCommit, POOL_SIZE);
            chosen = Arrays.stream(sides.split("\\+")).map(String::trim).map(Side::valueOf).toArray(Side[]::new);
            appliers = Arrays.stream(chosen).map(peers::applier).toArray(PostgresPeers.Applier[]::new);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            peers.close();
        }

        String nextId() {
            return Ids.random(seed + sequence.incrementAndGet());
        }
    }

    /** Each side's times in the current iteration, in nanoseconds. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class SideTimes {
        private final long[] wall = new long[SIDES];
        private final long[] cpu = new long[SIDES];
        private final long[] server = new long[SIDES];
        private final long[] serverAtStart = new long[SIDES];
        private boolean readsServer;
        private long sleeps;
        private int[] order = new int[0];

        /**
         * A new order of the sides for the next round: a side that always followed the same other
         * side would inherit that one's traces in the caches, the scheduler and the server.
         */
        void shuffle(int n) {
            if (order.length != n) {
                order = new int[n];
                for (int i = 0; i < n; i++) {
                    order[i] = i;
                }
            }
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (int i = n - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int swap = order[i];
                order[i] = order[j];
                order[j] = swap;
            }
        }

        @Setup(Level.Iteration)
        public void readServerBefore(Database db, ThreadParams thread) throws SQLException {
            Arrays.fill(wall, 0);
            Arrays.fill(cpu, 0);
            Arrays.fill(server, 0);
            readsServer = thread.getThreadIndex() == 0;
            if (readsServer) {
                for (Side side : db.chosen) {
                    serverAtStart[side.ordinal()] = db.peers.serverCpuNanos(side);
                }
            }
            sleeps = -ProcessCostProfiler.callingThreadSleeps(); // after the reads above, which sleep too
        }

        @TearDown(Level.Iteration)
        public void readServerAfter(Database db) throws SQLException {
            sleeps += ProcessCostProfiler.callingThreadSleeps();
            if (readsServer) {
                for (Side side : db.chosen) {
                    server[side.ordinal()] = db.peers.serverCpuNanos(side) - serverAtStart[side.ordinal()];
                }
            }
        }

        /** The calling threads' sleeps, all sides together: per call of one side when it runs alone. */
        public long sleeps() { return sleeps; }
        public long jdbcWall() { return wall[Side.JDBC.ordinal()]; }
        public long jdbcCpu() { return cpu[Side.JDBC.ordinal()]; }
        public long jdbcServer() { return server[Side.JDBC.ordinal()]; }
        public long inboxWall() { return wall[Side.INBOX.ordinal()]; }
        public long inboxCpu() { return cpu[Side.INBOX.ordinal()]; }
        public long inboxServer() { return server[Side.INBOX.ordinal()]; }
        public long springIntegrationWall() { return wall[Side.SPRING_INTEGRATION.ordinal()]; }
        public long springIntegrationCpu() { return cpu[Side.SPRING_INTEGRATION.ordinal()]; }
        public long springIntegrationServer() { return server[Side.SPRING_INTEGRATION.ordinal()]; }
        public long camelWall() { return wall[Side.CAMEL.ordinal()]; }
        public long camelCpu() { return cpu[Side.CAMEL.ordinal()]; }
        public long camelServer() { return server[Side.CAMEL.ordinal()]; }
        public long jdbcWithSettingsWall() { return wall[Side.JDBC_WITH_SETTINGS.ordinal()]; }
        public long jdbcWithSettingsCpu() { return cpu[Side.JDBC_WITH_SETTINGS.ordinal()]; }
        public long inboxRowWall() { return wall[Side.INBOX_ROW.ordinal()]; }
        public long inboxRowCpu() { return cpu[Side.INBOX_ROW.ordinal()]; }
        public long inboxRowWithSettingsWall() { return wall[Side.INBOX_ROW_WITH_SETTINGS.ordinal()]; }
        public long inboxRowWithSettingsCpu() { return cpu[Side.INBOX_ROW_WITH_SETTINGS.ordinal()]; }
        public long inboxPreparedWall() { return wall[Side.INBOX_PREPARED.ordinal()]; }
        public long inboxPreparedCpu() { return cpu[Side.INBOX_PREPARED.ordinal()]; }
        public long jdbcWithClientWorkWall() { return wall[Side.JDBC_WITH_CLIENT_WORK.ordinal()]; }
        public long jdbcWithClientWorkCpu() { return cpu[Side.JDBC_WITH_CLIENT_WORK.ordinal()]; }
    }

    @Benchmark
    @Threads(1)
    public int round01(Database db, SideTimes times) throws SQLException {
        return round(db, times);
    }

    @Benchmark
    @Threads(8)
    public int round08(Database db, SideTimes times) throws SQLException {
        return round(db, times);
    }

    private static int round(Database db, SideTimes times) throws SQLException {
        int n = db.appliers.length;
        int applied = 0;
        times.shuffle(n);
        for (int k = 0; k < n; k++) {
            int i = times.order[k];
            String id = db.nextId();
            long start = System.nanoTime();
            long cpuStart = CPU.getCurrentThreadCpuTime();
            if (db.appliers[i].apply(id)) {
                applied++;
            }
            int side = db.chosen[i].ordinal();
            times.cpu[side] += CPU.getCurrentThreadCpuTime() - cpuStart;
            times.wall[side] += System.nanoTime() - start;
        }
        if (applied != n) {
            throw new IllegalStateException("a new id was not applied on every side: " + applied + " of " + n);
        }
        return applied;
    }
}
