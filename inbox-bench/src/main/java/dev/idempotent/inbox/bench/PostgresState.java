package dev.idempotent.inbox.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.postgres.PostgresInbox;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;

/**
 * What the PostgreSQL benchmarks share: two schemas of their own (one for the inbox, one for the
 * baseline, so their {@code stock} rows never lock each other), each with the inbox's tables and a
 * one-row {@code stock} table, reached through a HikariCP pool as an application would. Both
 * schemas are dropped on {@link #close}.
 *
 * <p>The server is {@code -Dinbox.bench.pg.url} as {@code -Dinbox.bench.pg.user}, no password. Their
 * defaults are the tests' server: {@code jdbc:postgresql://127.0.0.1:5432/test} as {@code postgres},
 * or what {@code INBOX_PG_HOST}, {@code INBOX_PG_PORT}, {@code INBOX_PG_DATABASE} and
 * {@code INBOX_PG_USER} say.
 */
public abstract class PostgresState {

    static final String URL = System.getProperty("inbox.bench.pg.url", "jdbc:postgresql://"
            + environment("INBOX_PG_HOST", "127.0.0.1") + ":" + environment("INBOX_PG_PORT", "5432") + "/"
            + environment("INBOX_PG_DATABASE", "test"));
    static final String USER = System.getProperty("inbox.bench.pg.user", environment("INBOX_PG_USER", "postgres"));
    static final int POOL_SIZE = 16;

    private final AtomicLong sequence = new AtomicLong();
    private final long seed = ThreadLocalRandom.current().nextLong();
    private String inboxSchema;
    private String jdbcSchema;
    private HikariDataSource inboxPool;
    private HikariDataSource jdbcPool;
    private PostgresInbox inbox;
    private HandWrittenPostgres jdbc;
    private Connection monitor;

    private static String environment(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** Creates both schemas, the inbox and the baseline. */
    protected void open() throws SQLException {
        open(false);
    }

    /** The same, with a group-committing inbox if {@code groupCommit}. */
    protected void open(boolean groupCommit) throws SQLException {
        open(groupCommit, true);
    }

    /**
     * The same, with the inbox's sessions committing without waiting for the WAL sync if not
     * {@code synchronousCommit} ({@code SET synchronous_commit TO off} on each of its pool's
     * connections; the baseline's pool keeps the server's setting): what is left of a commit is
     * then its round trips and CPU.
     */
    protected void open(boolean groupCommit, boolean synchronousCommit) throws SQLException {
        String suffix = HexFormat.of().formatHex(new SecureRandom().generateSeed(6));
        inboxSchema = "inbox_bench_i" + suffix;
        jdbcSchema = "inbox_bench_j" + suffix;
        try (Connection admin = DriverManager.getConnection(URL, USER, null);
             Statement create = admin.createStatement()) {
            create.execute("CREATE SCHEMA " + inboxSchema);
            create.execute("CREATE SCHEMA " + jdbcSchema);
        }
        inboxPool = pool(inboxSchema, synchronousCommit);
        jdbcPool = pool(jdbcSchema, true);
        // The baseline writes the inbox's own table, created the way the inbox creates it.
        PostgresInbox.builder(Jdbi.create(jdbcPool)).build().close();
        Jdbi.create(jdbcPool).useHandle(this::createStock);
        Jdbi inboxJdbi = Jdbi.create(inboxPool);
        inbox = (groupCommit ? PostgresInbox.builder(inboxJdbi).commitMode(CommitMode.GROUP) : PostgresInbox.builder(inboxJdbi))
                .name(SqliteState.INBOX)
                .build();
        inbox.jdbi().useHandle(this::createStock);
        jdbc = new HandWrittenPostgres(jdbcPool, SqliteState.INBOX);
        monitor = DriverManager.getConnection(URL, USER, null);
    }

    private void createStock(org.jdbi.v3.core.Handle handle) {
        handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total BIGINT NOT NULL)");
        handle.execute("INSERT INTO stock (id, total) VALUES (1, 0)");
    }

    private static HikariDataSource pool(String schema, boolean synchronousCommit) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(URL);
        config.setUsername(USER);
        config.setMaximumPoolSize(POOL_SIZE);
        config.setPoolName(schema);
        config.setConnectionInitSql("SET search_path TO " + schema
                + (synchronousCommit ? "" : "; SET synchronous_commit TO off"));
        // Names the pool's sessions in pg_stat_activity, so that their server processes can be found.
        config.addDataSourceProperty("ApplicationName", schema);
        return new HikariDataSource(config);
    }

    /** A new id; the sequence is shared by all threads of the benchmark. */
    String nextId() {
        return Ids.random(seed + sequence.incrementAndGet());
    }

    /** The inbox as a user calls it, the effect written with Jdbi. */
    Outcome<Integer> inboxApply(String id) {
        return inbox.apply(id, Content.of(SqliteState.QUANTITY),
                tx -> tx.execute(HandWrittenPostgres.UPDATE, SqliteState.QUANTITY));
    }

    /** The inbox with the effect written as the baseline writes it: a statement prepared by name. */
    Outcome<Integer> inboxApplyPrepared(String id) throws SQLException {
        return inbox.apply(id, Content.of(SqliteState.QUANTITY), tx -> {
            try (PreparedStatement update = tx.getConnection().prepareStatement(HandWrittenPostgres.UPDATE)) {
                update.setLong(1, SqliteState.QUANTITY);
                return update.executeUpdate();
            }
        });
    }

    /** CPU time used so far by the server processes of the inbox's pool, in nanoseconds. */
    long inboxServerCpuNanos() throws SQLException {
        return serverCpuNanos(inboxSchema);
    }

    /** The same for the baseline's pool. */
    long jdbcServerCpuNanos() throws SQLException {
        return serverCpuNanos(jdbcSchema);
    }

    /**
     * Sums, over the sessions named {@code applicationName}, the CPU time of their server processes
     * as Linux's /proc tells it: zero when the server runs on another machine. A session that ended
     * takes its share with it. The monitoring connection is a session of its own, so asking costs
     * neither side anything.
     */
    private long serverCpuNanos(String applicationName) throws SQLException {
        long total = 0;
        try (PreparedStatement sessions = monitor.prepareStatement(
                "SELECT pid FROM pg_stat_activity WHERE application_name = ?")) {
            sessions.setString(1, applicationName);
            try (ResultSet pids = sessions.executeQuery()) {
                while (pids.next()) {
                    total += ProcessCostProfiler.serverProcessCpuNanos(pids.getLong(1));
                }
            }
        }
        return total;
    }

    PostgresInbox inbox() {
        return inbox;
    }

    /** The pool the inbox's transactions use, for callers that open transactions of their own. */
    DataSource inboxPool() {
        return inboxPool;
    }

    /** The pool of the baseline's schema. */
    DataSource jdbcPool() {
        return jdbcPool;
    }

    HandWrittenPostgres jdbc() {
        return jdbc;
    }

    /** Closes the inbox and the pools, then drops both schemas. */
    protected void close() {
        try {
            if (monitor != null) {
                monitor.close();
            }
        } catch (SQLException e) {
            // The monitor only read CPU times; the pools and schemas below must go all the same.
        }
        monitor = null;
        try {
            if (inbox != null) {
                inbox.close();
            }
        } finally {
            try (HikariDataSource admin = inboxPool) {
                if (admin != null) {
                    Jdbi.create(admin).useHandle(handle -> {
                        handle.execute("DROP SCHEMA IF EXISTS " + inboxSchema + " CASCADE");
                        handle.execute("DROP SCHEMA IF EXISTS " + jdbcSchema + " CASCADE");
                    });
                }
            } finally {
                if (jdbcPool != null) {
                    jdbcPool.close();
                }
                inbox = null;
                jdbc = null;
                inboxPool = null;
                jdbcPool = null;
            }
        }
    }
}
