package dev.idempotent.inbox.bench;

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
 * {@code size} new messages in one transaction: {@code jdbc} is the hand-written batch (one {@code
 * BEGIN IMMEDIATE}, the claim and {@code UPDATE stock} per message, one {@code COMMIT}), {@code
 * inbox} is {@code applyAll}, which adds a savepoint per message. Scores are batches per second;
 * multiply by {@code size} for messages per second. The two run one after the other; {@link
 * PairedBenchmark#batches} interleaves them for a ratio that load cannot bias.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class BatchBenchmark {

    @State(Scope.Benchmark)
    public static class Database extends SqliteState {

        @Param({"10", "100", "1000"})
        public int size;

        @Param({"DISK"})
        public Location location;

        /** How the inbox's effect is written: with Jdbi as in the README, or reusing a prepared statement. */
        @Param({"JDBI", "PREPARED"})
        public String effect;

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
    public int jdbc(Database db) throws SQLException {
        return db.jdbc().applyBatch(db.nextIds(db.size), SqliteState.QUANTITY);
    }

    @Benchmark
    public int inbox(Database db) {
        return db.inboxApplyAll(db.nextIds(db.size), "PREPARED".equals(db.effect));
    }
}
