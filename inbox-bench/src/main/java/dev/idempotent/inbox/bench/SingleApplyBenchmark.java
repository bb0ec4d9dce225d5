package dev.idempotent.inbox.bench;

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

/**
 * One caller, one new id per call, one transaction per message. {@code jdbc} is the baseline;
 * {@code inbox} is the inbox as the README uses it. On {@code DISK} both are bound by the sync
 * rate; on {@code TMPFS} syncs are free, so the ratio shows the inbox's CPU cost.
 *
 * <p>Two variants explain the gap: {@code jdbcUnprepared} is the baseline preparing every statement
 * afresh, {@code inboxPreparedEffect} the inbox with an effect that reuses its prepared statement.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class SingleApplyBenchmark {

    @State(Scope.Benchmark)
    public static class Database extends SqliteState {

        @Param({"DISK", "TMPFS"})
        public Location location;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            open(location, 0, null);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            close();
        }
    }

    @Benchmark
    public boolean jdbc(Database db) throws SQLException {
        return db.jdbc().apply(db.nextId(), SqliteState.QUANTITY);
    }

    @Benchmark
    public Outcome<Integer> inbox(Database db) {
        return db.inboxApply(db.nextId());
    }

    @Benchmark
    public boolean jdbcUnprepared(Database db) throws SQLException {
        return db.jdbc().applyUnprepared(db.nextId(), SqliteState.QUANTITY);
    }

    @Benchmark
    public Outcome<Integer> inboxPreparedEffect(Database db) throws SQLException {
        return db.inboxApplyPreparedEffect(db.nextId());
    }
}
