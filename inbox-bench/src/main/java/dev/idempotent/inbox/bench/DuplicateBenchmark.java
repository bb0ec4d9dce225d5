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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Redeliveries: every call offers an id already stored with the same content. The inbox answers
 * {@code Duplicate} and writes nothing, so no sync happens; compare with
 * {@link SingleApplyBenchmark#inbox} on {@code DISK} in the same invocation (the new-id rate).
 * {@code jdbc} is the hand-written baseline doing the same claim and read.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class DuplicateBenchmark {

    static final int STORED = 10_000;

    @State(Scope.Benchmark)
    public static class Database extends SqliteState {

        private long next;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            open(Location.DISK, STORED, Ids::random);
        }

        String storedId() {
            return Ids.random(next++ % STORED);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            close();
        }
    }

    @Benchmark
    public boolean jdbc(Database db) throws SQLException {
        return db.jdbc().apply(db.storedId(), SqliteState.QUANTITY);
    }

    @Benchmark
    public Outcome<Integer> inbox(Database db) {
        return db.inboxApply(db.storedId());
    }
}
