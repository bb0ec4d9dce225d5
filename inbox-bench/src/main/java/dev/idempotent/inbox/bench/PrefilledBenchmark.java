package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.Outcome;
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
 * New ids into an empty inbox and into one already holding {@code rows} rows (10 million by
 * default). The stored ids are spread evenly over the key space and the new ones are random, so
 * every claim lands between stored keys, as real ids do. The file is filled once per trial, before
 * warm-up, in one transaction; its setup takes about a minute on the reference machine.
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

    @Benchmark
    public Outcome<Integer> inbox(Database db) {
        return db.inboxApply(db.nextId());
    }
}
