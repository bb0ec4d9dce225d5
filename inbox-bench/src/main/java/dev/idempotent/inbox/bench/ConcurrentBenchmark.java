package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Outcome;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Threads;

/**
 * 1, 8 and 32 callers on one inbox (one shared state, so one file and one inbox), each applying new
 * ids as fast as it can: throughput, and with {@code SampleTime} the latency distribution of single
 * calls (p50, p99, max: starvation shows as a max far above p99). With {@code commitMode=GROUP}, the
 * default, the inbox's callers go through its group commit (one transaction and one sync for the
 * queued messages, a savepoint each); with {@code -p commitMode=PER_CALLER} each caller takes its
 * turn with a transaction and a sync of its own. The baseline is the hand-written transaction
 * behind a fair lock, one transaction per message, whatever the mode.
 */
@BenchmarkMode({Mode.Throughput, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class ConcurrentBenchmark {

    @State(Scope.Benchmark)
    public static class Database extends SqliteState {

        @Param({"DISK"})
        public Location location;

        /** Only {@code GROUP} unless asked for, so that commands without the parameter measure what they did. */
        @Param({"GROUP"})
        public CommitMode commitMode = CommitMode.GROUP;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            open(location, 0, null, commitMode);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            close();
        }
    }

    @Benchmark
    @Threads(1)
    public boolean jdbc01(Database db) throws SQLException {
        return db.jdbc().apply(db.nextId(), SqliteState.QUANTITY);
    }

    @Benchmark
    @Threads(8)
    public boolean jdbc08(Database db) throws SQLException {
        return db.jdbc().apply(db.nextId(), SqliteState.QUANTITY);
    }

    @Benchmark
    @Threads(32)
    public boolean jdbc32(Database db) throws SQLException {
        return db.jdbc().apply(db.nextId(), SqliteState.QUANTITY);
    }

    @Benchmark
    @Threads(1)
    public Outcome<Integer> inbox01(Database db) {
        return db.inboxApply(db.nextId());
    }

    @Benchmark
    @Threads(8)
    public Outcome<Integer> inbox08(Database db) {
        return db.inboxApply(db.nextId());
    }

    @Benchmark
    @Threads(32)
    public Outcome<Integer> inbox32(Database db) {
        return db.inboxApply(db.nextId());
    }
}
