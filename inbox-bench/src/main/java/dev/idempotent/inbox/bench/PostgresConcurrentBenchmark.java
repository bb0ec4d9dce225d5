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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * 1, 8 and 32 callers in one process applying new ids on PostgreSQL, every message adding to the
 * same {@code stock} row: the hand-written transaction (one per message, connections from a pool of
 * 16), the inbox as built by {@code PostgresInbox.builder} (the same, one transaction per call) and
 * the inbox built with {@code CommitMode.GROUP} (queued callers committed together on one
 * connection, a savepoint each). Run one after the other; compare rates within one invocation.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PostgresConcurrentBenchmark {

    @State(Scope.Benchmark)
    public static class Database extends PostgresState {

        @Param({"JDBC", "INBOX", "INBOX_GROUP_COMMIT"})
        public String writer = "JDBC";

        @Setup(Level.Trial)
        public void setUp() throws SQLException {
            open("INBOX_GROUP_COMMIT".equals(writer));
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }

        boolean apply() throws SQLException {
            return "JDBC".equals(writer)
                    ? jdbc().apply(nextId(), SqliteState.QUANTITY)
                    : inboxApply(nextId()).isNewlyApplied();
        }
    }

    @Benchmark
    @Threads(1)
    public boolean callers01(Database db) throws SQLException {
        return db.apply();
    }

    @Benchmark
    @Threads(8)
    public boolean callers08(Database db) throws SQLException {
        return db.apply();
    }

    @Benchmark
    @Threads(32)
    public boolean callers32(Database db) throws SQLException {
        return db.apply();
    }
}
