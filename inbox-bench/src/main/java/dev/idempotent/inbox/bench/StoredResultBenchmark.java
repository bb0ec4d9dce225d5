package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.ResultInbox;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Handle;
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
 * What storing results costs: one inbox, called through {@link Inbox#storingResults} with a
 * 1 KiB result and directly without one, interleaved call by call (alternating which goes first)
 * as in {@link PairedBenchmark}, so both sides see the same table, disk and load. The counters
 * {@code storedNanos} and {@code plainNanos} are each side's time per iteration; both sides make
 * the same number of calls, so {@code plainNanos / storedNanos} is the stored side's rate relative
 * to the plain one.
 *
 * <p>{@link #firstApply}: a new id, its effect the README's {@code UPDATE stock}, with the result
 * stored in the same transaction (one more {@code UPDATE} of the claimed row) against the same
 * apply storing nothing. {@link #duplicate}: an id stored earlier with a 1 KiB result, answered
 * with the result read back and decoded, against an id stored earlier without one. On SQLite the
 * file is on {@link Location#DISK} with {@code synchronous=FULL}; on PostgreSQL the server is
 * {@link PostgresState}'s.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class StoredResultBenchmark {

    /** The size of every stored result. */
    static final int RESULT_BYTES = 1024;

    /** Ids stored before the trial on each side, for the duplicates to cycle through. */
    static final int STORED = 1_000;

    static final ResultCodec<byte[]> CODEC = ResultCodec.bytes("bench.Receipt", 1);

    /** A SQLite file on the disk, or the PostgreSQL server. */
    public enum Database {
        SQLITE_DISK,
        POSTGRESQL
    }

    /** One inbox and its view storing results, with ids stored with and without a result. */
    @State(Scope.Benchmark)
    public static class Sides {

        @Param({"SQLITE_DISK", "POSTGRESQL"})
        public Database database;

        /**
         * PostgreSQL only: {@code off} lets commits return before the WAL sync, so that what the
         * stored result adds (its {@code UPDATE}'s round trip, the row's extra bytes) is not hidden
         * under the sync's milliseconds. The headline runs keep {@code on}.
         */
        @Param({"on"})
        public String synchronousCommit;

        private SqliteSide sqlite;
        private PostgresSide postgres;
        Inbox<Handle> inbox;
        ResultInbox<Handle, byte[]> storing;
        final byte[] result = new byte[RESULT_BYTES];
        private final List<String> withResult = new ArrayList<>(STORED);
        private final List<String> withoutResult = new ArrayList<>(STORED);
        private int nextStored;
        private boolean storedFirst;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            ThreadLocalRandom.current().nextBytes(result);
            if (database == Database.SQLITE_DISK) {
                sqlite = new SqliteSide();
                sqlite.open(Location.DISK, 0, null);
                inbox = sqlite.inbox();
            } else {
                postgres = new PostgresSide();
                postgres.open(false, !"off".equals(synchronousCommit));
                inbox = postgres.inbox();
            }
            storing = inbox.storingResults(CODEC);
            // Stored in batches, so that filling costs a few commits rather than thousands of syncs.
            for (int batch = 0; batch < STORED / 100; batch++) {
                List<Message> with = messages(100, withResult);
                List<Message> without = messages(100, withoutResult);
                storing.applyAll(with, (tx, message) -> {
                    tx.execute(HandWrittenInbox.UPDATE, SqliteState.QUANTITY);
                    return result;
                });
                inbox.applyAll(without, (tx, message) -> tx.execute(HandWrittenInbox.UPDATE, SqliteState.QUANTITY));
            }
        }

        private List<Message> messages(int count, List<String> ids) {
            List<Message> messages = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                String id = nextId();
                ids.add(id);
                messages.add(Message.of(id, Content.of(SqliteState.QUANTITY)));
            }
            return messages;
        }

        String nextId() {
            return sqlite != null ? sqlite.nextId() : postgres.nextId();
        }

        /** The next pair of stored ids, the first with a result, the second without. */
        int nextStored() {
            int index = nextStored;
            nextStored = (nextStored + 1) % STORED;
            return index;
        }

        boolean storedFirst() {
            storedFirst = !storedFirst;
            return storedFirst;
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            if (sqlite != null) {
                sqlite.close();
            }
            if (postgres != null) {
                postgres.close();
            }
        }
    }

    static final class SqliteSide extends SqliteState {
    }

    static final class PostgresSide extends PostgresState {
    }

    /** Time spent on each side in the current iteration, in nanoseconds. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class SideTimes {
        public long storedNanos;
        public long plainNanos;

        @Setup(Level.Iteration)
        public void reset() {
            storedNanos = 0;
            plainNanos = 0;
        }
    }

    @Benchmark
    public boolean firstApply(Sides sides, SideTimes times) {
        boolean applied = true;
        boolean storedFirst = sides.storedFirst();
        for (int side = 0; side < 2; side++) {
            if ((side == 0) == storedFirst) {
                long start = System.nanoTime();
                Outcome<byte[]> outcome = sides.storing.apply(sides.nextId(), Content.of(SqliteState.QUANTITY), tx -> {
                    tx.execute(HandWrittenInbox.UPDATE, SqliteState.QUANTITY);
                    return sides.result;
                });
                times.storedNanos += System.nanoTime() - start;
                applied &= outcome.isNewlyApplied();
            } else {
                long start = System.nanoTime();
                Outcome<Integer> outcome = sides.inbox.apply(sides.nextId(), Content.of(SqliteState.QUANTITY),
                        tx -> tx.execute(HandWrittenInbox.UPDATE, SqliteState.QUANTITY));
                times.plainNanos += System.nanoTime() - start;
                applied &= outcome.isNewlyApplied();
            }
        }
        if (!applied) {
            throw new IllegalStateException("a new id was not applied");
        }
        return applied;
    }

    @Benchmark
    public int duplicate(Sides sides, SideTimes times) {
        int index = sides.nextStored();
        int bytes = 0;
        boolean storedFirst = sides.storedFirst();
        for (int side = 0; side < 2; side++) {
            if ((side == 0) == storedFirst) {
                long start = System.nanoTime();
                Outcome<byte[]> outcome = sides.storing.apply(sides.withResult.get(index),
                        Content.of(SqliteState.QUANTITY), tx -> {
                            throw new IllegalStateException("the effect of a duplicate ran");
                        });
                times.storedNanos += System.nanoTime() - start;
                bytes += ((Outcome.Duplicate<byte[]>) outcome).result().value().length;
            } else {
                long start = System.nanoTime();
                Outcome<Integer> outcome = sides.inbox.apply(sides.withoutResult.get(index),
                        Content.of(SqliteState.QUANTITY), tx -> {
                            throw new IllegalStateException("the effect of a duplicate ran");
                        });
                times.plainNanos += System.nanoTime() - start;
                bytes += ((Outcome.Duplicate<Integer>) outcome).result().isStored() ? -1 : 0;
            }
        }
        if (bytes != RESULT_BYTES) {
            throw new IllegalStateException("a duplicate did not carry exactly the stored result: " + bytes);
        }
        return bytes;
    }
}
