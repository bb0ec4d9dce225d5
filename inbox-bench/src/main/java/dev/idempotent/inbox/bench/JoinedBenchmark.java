package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A joined apply ({@link JdbiInbox#applyIn}) inside a transaction the caller opened, against
 * hand-written JDBC doing the same writes in the same kind of transaction: begin, claim the id in
 * the inbox's table, {@code UPDATE stock}, commit. Paired call by call on one thread, alternating
 * which side goes first, so both see the same machine; the counters {@code inboxNanos} and
 * {@code jdbcNanos} are each side's time, and their quotient is the rate ratio.
 *
 * <p>{@code form=CONNECTION} passes the caller's JDBC connection (the caller then reports its
 * commit on the pending outcome); {@code form=HANDLE} runs the caller's transaction in Jdbi's
 * {@code useTransaction} and joins its handle. On PostgreSQL each side borrows a connection of its
 * schema's pool per transaction; on SQLite each side keeps one connection to one file, in
 * sqlite-jdbc's own transaction mode (its {@code commit()} ends the transaction).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class JoinedBenchmark {

    /** How the caller holds its transaction. */
    public enum Form { CONNECTION, HANDLE }

    /** Each side's wall time in the current iteration, in nanoseconds. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class SideTimes {
        public long inboxNanos;
        public long jdbcNanos;
        private boolean inboxFirst;
    }

    @State(Scope.Benchmark)
    public static class Postgres extends PostgresState {

        @Param({"CONNECTION", "HANDLE"})
        public Form form;

        @Setup(Level.Trial)
        public void setUp() throws SQLException {
            open();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    @State(Scope.Benchmark)
    public static class Sqlite extends SqliteState {

        @Param({"CONNECTION", "HANDLE"})
        public Form form;

        @Param({"DISK"})
        public Location location;

        private Handle inboxCaller;
        private Connection jdbcCaller;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            open(location, 0, null);
            inboxCaller = SqliteInbox.jdbi(file()).open();
            jdbcCaller = SqliteInbox.jdbi(file()).open().getConnection();
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            inboxCaller.close();
            jdbcCaller.close();
            close();
        }
    }

    @Benchmark
    @Threads(1)
    public boolean postgres(Postgres db, SideTimes times) throws SQLException {
        times.inboxFirst = !times.inboxFirst;
        if (times.inboxFirst) {
            return postgresInbox(db, times) & postgresJdbc(db, times);
        }
        return postgresJdbc(db, times) & postgresInbox(db, times);
    }

    private static boolean postgresInbox(Postgres db, SideTimes times) throws SQLException {
        long start = System.nanoTime();
        boolean applied;
        if (db.form == Form.HANDLE) {
            applied = db.inbox().jdbi().inTransaction(handle -> db.inbox().applyIn(handle, db.nextId(),
                    Content.of(SqliteState.QUANTITY), tx -> tx.execute(HandWrittenPostgres.UPDATE, SqliteState.QUANTITY))
                    .isNewlyApplied());
        } else {
            try (Connection connection = db.inboxPool().getConnection()) {
                applied = joinedOnConnection(db.inbox(), connection, db.nextId(), HandWrittenPostgres.UPDATE);
            }
        }
        times.inboxNanos += System.nanoTime() - start;
        return applied;
    }

    private static boolean postgresJdbc(Postgres db, SideTimes times) throws SQLException {
        long start = System.nanoTime();
        boolean applied;
        DataSource pool = db.jdbcPool();
        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            try {
                applied = db.jdbc().applyIn(connection, db.nextId(), SqliteState.QUANTITY);
                connection.commit();
            } finally {
                connection.setAutoCommit(true);
            }
        }
        times.jdbcNanos += System.nanoTime() - start;
        return applied;
    }

    @Benchmark
    @Threads(1)
    public boolean sqlite(Sqlite db, SideTimes times) throws SQLException {
        times.inboxFirst = !times.inboxFirst;
        if (times.inboxFirst) {
            return sqliteInbox(db, times) & sqliteJdbc(db, times);
        }
        return sqliteJdbc(db, times) & sqliteInbox(db, times);
    }

    private static boolean sqliteInbox(Sqlite db, SideTimes times) throws SQLException {
        long start = System.nanoTime();
        boolean applied;
        if (db.form == Form.HANDLE) {
            applied = db.inboxCaller.inTransaction(handle -> db.inbox().applyIn(handle, db.nextId(),
                    Content.of(SqliteState.QUANTITY), tx -> tx.execute(HandWrittenInbox.UPDATE, SqliteState.QUANTITY))
                    .isNewlyApplied());
        } else {
            applied = joinedOnConnection(db.inbox(), db.inboxCaller.getConnection(), db.nextId(), HandWrittenInbox.UPDATE);
        }
        times.inboxNanos += System.nanoTime() - start;
        return applied;
    }

    /** The caller's JDBC transaction around one joined apply, as the README shows it. */
    private static boolean joinedOnConnection(JdbiInbox inbox, Connection connection, String id, String update)
            throws SQLException {
        connection.setAutoCommit(false);
        try {
            PendingOutcome<Integer> pending = inbox.applyIn(connection, id, Content.of(SqliteState.QUANTITY),
                    tx -> tx.execute(update, SqliteState.QUANTITY));
            connection.commit();
            Outcome<Integer> outcome = pending.committed();
            return outcome.isNewlyApplied();
        } finally {
            connection.setAutoCommit(true);
        }
    }

    /** The same writes by hand in the caller's JDBC transaction on SQLite. */
    private static boolean sqliteJdbc(Sqlite db, SideTimes times) throws SQLException {
        long start = System.nanoTime();
        Connection connection = db.jdbcCaller;
        Fingerprint fingerprint = Content.of(SqliteState.QUANTITY).fingerprint();
        boolean applied;
        connection.setAutoCommit(false);
        try {
            try (PreparedStatement claim = connection.prepareStatement(HandWrittenInbox.CLAIM)) {
                claim.setString(1, SqliteState.INBOX);
                claim.setString(2, db.nextId());
                claim.setInt(3, fingerprint.algorithm());
                claim.setString(4, fingerprint.contentType().name());
                claim.setInt(5, fingerprint.contentType().version());
                claim.setBytes(6, fingerprint.digest());
                claim.setLong(7, Instant.now().toEpochMilli());
                applied = claim.executeUpdate() == 1;
            }
            // Every id is new here, so the stored row is never read.
            if (applied) {
                try (PreparedStatement update = connection.prepareStatement(HandWrittenInbox.UPDATE)) {
                    update.setLong(1, SqliteState.QUANTITY);
                    update.executeUpdate();
                }
            }
            connection.commit();
        } finally {
            connection.setAutoCommit(true);
        }
        times.jdbcNanos += System.nanoTime() - start;
        return applied;
    }
}
