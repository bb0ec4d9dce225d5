package dev.idempotent.inbox.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.postgres.PostgresInbox;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.camel.processor.idempotent.jdbc.JdbcMessageIdRepository;
import org.jdbi.v3.core.Jdbi;
import org.springframework.integration.jdbc.metadata.JdbcMetadataStore;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What a user weighs the inbox against on PostgreSQL, each in a schema of its own in a database
 * made for the run (so that {@code synchronous_commit} can be set for it alone), behind a HikariCP
 * pool of its own, and each doing the same business change, {@code UPDATE stock SET total = total +
 * 7}, in the transaction that records the message id:
 * <ul>
 *   <li>{@link Side#JDBC}: hand-written, as a user writes it: a {@code processed_message} table
 *       with the id as its key, {@code INSERT ... ON CONFLICT DO NOTHING} and the update on one
 *       borrowed connection, committed;
 *   <li>{@link Side#INBOX}: {@code inbox.apply} with a Jdbi effect, as the README shows;
 *   <li>{@link Side#SPRING_INTEGRATION}: {@code JdbcMetadataStore.putIfAbsent} and the update
 *       through a {@code JdbcTemplate} in a {@code TransactionTemplate};
 *   <li>{@link Side#CAMEL}: {@code JdbcMessageIdRepository.add} and the update, likewise.
 * </ul>
 * Neither peer checks content: a resent id with other content passes as a duplicate there. The
 * other sides take the difference between {@code JDBC} and {@code INBOX} apart, one step each. The
 * database is dropped on {@link #close}.
 */
final class PostgresPeers implements AutoCloseable {

    /** One way of recording the id with the change. */
    enum Side {
        JDBC,
        INBOX,
        SPRING_INTEGRATION,
        CAMEL,
        /**
         * {@link #JDBC} begun as the inbox begins: its own {@code BEGIN} with the isolation level and
         * the lock timeout in front of the claim, on a connection still in autocommit mode.
         */
        JDBC_WITH_SETTINGS,
        /** {@link HandWrittenPostgres}: the inbox's own row and claim written by hand. */
        INBOX_ROW,
        /** {@link #INBOX_ROW} with the inbox's settings, as the inbox sends them. */
        INBOX_ROW_WITH_SETTINGS,
        /** {@link #INBOX} with the effect's update prepared on the handle's connection, past Jdbi. */
        INBOX_PREPARED,
        /**
         * {@link #JDBC} with 10 µs of busy client work after each of its three answers: what client
         * work between round trips costs beyond itself.
         */
        JDBC_WITH_CLIENT_WORK
    }

    static final String UPDATE = "UPDATE stock SET total = total + ? WHERE id = 1";
    static final long QUANTITY = 7;

    private final String database;
    private final Map<String, HikariDataSource> pools = new LinkedHashMap<>();
    private final Applier[] appliers = new Applier[Side.values().length];
    private PostgresInbox inbox;
    private JdbcMessageIdRepository camel;

    /** Applies one message with a new id; true if the change was made. */
    @FunctionalInterface
    interface Applier {
        boolean apply(String id) throws SQLException;
    }

    /**
     * Creates the database with {@code synchronousCommit} ({@code on} or {@code off}) and the sides.
     */
    PostgresPeers(String synchronousCommit, int poolSize) throws SQLException {
        database = "inbox_bench_" + HexFormat.of().formatHex(new SecureRandom().generateSeed(5));
        try (Connection admin = DriverManager.getConnection(PostgresState.URL, PostgresState.USER, null);
             Statement create = admin.createStatement()) {
            create.execute("CREATE DATABASE " + database);
            create.execute("ALTER DATABASE " + database + " SET synchronous_commit = '"
                    + ("off".equals(synchronousCommit) ? "off" : "on") + "'");
        }
        try {
            DataSource jdbc = pool("jdbc", poolSize);
            appliers[Side.JDBC.ordinal()] = handWritten(jdbc, false, 0);
            appliers[Side.JDBC_WITH_SETTINGS.ordinal()] = handWritten(jdbc, true, 0);
            appliers[Side.JDBC_WITH_CLIENT_WORK.ordinal()] = handWritten(jdbc, false, CLIENT_WORK_NANOS);
            DataSource inboxRow = pool("inbox_row", poolSize);
            PostgresInbox.builder(Jdbi.create(inboxRow)).build().close(); // the inbox's tables
            HandWrittenPostgres rows = new HandWrittenPostgres(inboxRow, "bench");
            appliers[Side.INBOX_ROW.ordinal()] = id -> rows.apply(id, QUANTITY);
            appliers[Side.INBOX_ROW_WITH_SETTINGS.ordinal()] = id -> rows.applyWithSettings(id, QUANTITY);
            appliers[Side.INBOX.ordinal()] = inbox(pool("inbox", poolSize));
            appliers[Side.INBOX_PREPARED.ordinal()] = inboxPrepared();
            appliers[Side.SPRING_INTEGRATION.ordinal()] = springIntegration(pool("spring_integration", poolSize));
            appliers[Side.CAMEL.ordinal()] = camel(pool("camel", poolSize));
        } catch (SQLException | RuntimeException e) {
            close();
            throw e;
        }
    }

    Applier applier(Side side) {
        return appliers[side.ordinal()];
    }

    /**
     * CPU time used so far by the server processes behind {@code side}'s pool, in nanoseconds, as
     * Linux's /proc tells it (zero when the server runs on another machine). Each pool names its
     * sessions; sides that share a pool share the figure.
     */
    long serverCpuNanos(Side side) throws SQLException {
        long total = 0;
        try (Connection monitor = DriverManager.getConnection(PostgresState.URL, PostgresState.USER, null);
             PreparedStatement sessions = monitor.prepareStatement(
                     "SELECT pid FROM pg_stat_activity WHERE application_name = ?")) {
            sessions.setString(1, applicationName(poolOf(side)));
            try (var pids = sessions.executeQuery()) {
                while (pids.next()) {
                    total += ProcessCostProfiler.serverProcessCpuNanos(pids.getLong(1));
                }
            }
        }
        return total;
    }

    /** {@return the stock total {@code side} has written so far} */
    long stockTotal(Side side) throws SQLException {
        try (Connection connection = pools.get(poolOf(side)).getConnection();
             Statement query = connection.createStatement();
             var total = query.executeQuery("SELECT total FROM stock WHERE id = 1")) {
            total.next();
            return total.getLong(1);
        }
    }

    /** {@return the value of {@code setting} in a session of {@code side}'s pool} */
    String setting(Side side, String setting) throws SQLException {
        try (Connection connection = pools.get(poolOf(side)).getConnection();
             PreparedStatement query = connection.prepareStatement("SELECT current_setting(?)")) {
            query.setString(1, setting);
            try (var value = query.executeQuery()) {
                value.next();
                return value.getString(1);
            }
        }
    }

    /** {@return the name of the run's database} */
    String database() {
        return database;
    }

    private static String poolOf(Side side) {
        return switch (side) {
            case JDBC, JDBC_WITH_SETTINGS, JDBC_WITH_CLIENT_WORK -> "jdbc";
            case INBOX, INBOX_PREPARED -> "inbox";
            case INBOX_ROW, INBOX_ROW_WITH_SETTINGS -> "inbox_row";
            case SPRING_INTEGRATION -> "spring_integration";
            case CAMEL -> "camel";
        };
    }

    private String applicationName(String pool) {
        return database + "_" + pool;
    }

    private static final long CLIENT_WORK_NANOS = 10_000;

    /** Spins for {@code nanos}: client work that holds the thread as computing would. */
    private static void work(long nanos) {
        long until = System.nanoTime() + nanos;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    private static Applier handWritten(DataSource pool, boolean beginAsTheInbox, long workNanos) throws SQLException {
        execute(pool, "CREATE TABLE IF NOT EXISTS processed_message (id VARCHAR(255) PRIMARY KEY,"
                + " processed_at TIMESTAMPTZ NOT NULL DEFAULT now())");
        String claimSql = (beginAsTheInbox ? HandWrittenPostgres.BEGIN : "")
                + "INSERT INTO processed_message (id) VALUES (?) ON CONFLICT DO NOTHING";
        return id -> {
            try (Connection connection = pool.getConnection()) {
                if (!beginAsTheInbox) {
                    connection.setAutoCommit(false);
                }
                try {
                    boolean applied;
                    try (PreparedStatement claim = connection.prepareStatement(claimSql)) {
                        claim.setString(1, id);
                        applied = HandWrittenPostgres.inserted(claim);
                    } finally {
                        // Begun as the inbox: the BEGIN went with the claim; autocommit off sends nothing.
                        connection.setAutoCommit(false);
                    }
                    work(workNanos);
                    if (applied) {
                        try (PreparedStatement update = connection.prepareStatement(UPDATE)) {
                            update.setLong(1, QUANTITY);
                            update.executeUpdate();
                        }
                        work(workNanos);
                    }
                    connection.commit();
                    work(workNanos);
                    return applied;
                } catch (SQLException | RuntimeException e) {
                    connection.rollback();
                    throw e;
                } finally {
                    connection.setAutoCommit(true);
                }
            }
        };
    }

    private Applier inbox(DataSource pool) {
        inbox = PostgresInbox.builder(Jdbi.create(pool)).name("bench").build();
        return id -> inbox.apply(id, Content.of(QUANTITY), tx -> tx.execute(UPDATE, QUANTITY)).isNewlyApplied();
    }

    private Applier inboxPrepared() {
        return id -> inbox.apply(id, Content.of(QUANTITY), tx -> {
            try (PreparedStatement update = tx.getConnection().prepareStatement(UPDATE)) {
                update.setLong(1, QUANTITY);
                return update.executeUpdate();
            }
        }).isNewlyApplied();
    }

    private static Applier springIntegration(DataSource pool) throws SQLException {
        execute(pool, """
                CREATE TABLE INT_METADATA_STORE (
                    METADATA_KEY VARCHAR(255) NOT NULL,
                    METADATA_VALUE VARCHAR(4000),
                    REGION VARCHAR(100) NOT NULL,
                    CONSTRAINT INT_METADATA_STORE_PK PRIMARY KEY (METADATA_KEY, REGION))""");
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        JdbcMetadataStore store = new JdbcMetadataStore(jdbc);
        store.afterPropertiesSet();
        store.start();
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(pool));
        return id -> Boolean.TRUE.equals(transactions.execute(status -> {
            if (store.putIfAbsent(id, "1") != null) {
                return false;
            }
            jdbc.update(UPDATE, QUANTITY);
            return true;
        }));
    }

    private Applier camel(DataSource pool) throws SQLException {
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(pool));
        camel = new JdbcMessageIdRepository(pool, transactions, "bench");
        camel.start(); // creates CAMEL_MESSAGEPROCESSED
        JdbcTemplate jdbc = new JdbcTemplate(pool);
        JdbcMessageIdRepository repository = camel;
        return id -> Boolean.TRUE.equals(transactions.execute(status -> {
            if (!repository.add(id)) {
                return false;
            }
            jdbc.update(UPDATE, QUANTITY);
            return true;
        }));
    }

    /** A pool on a new schema {@code name} of the run's database, with the one-row stock table. */
    private HikariDataSource pool(String name, int size) throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(PostgresState.URL.replaceFirst("/[^/?]*(\\?.*)?$", "/" + database + "$1"));
        config.setUsername(PostgresState.USER);
        config.setMaximumPoolSize(size);
        config.setPoolName(applicationName(name));
        config.setConnectionInitSql("SET search_path TO " + name);
        config.addDataSourceProperty("ApplicationName", applicationName(name));
        // A schema of its own before the first connection needs it in its search_path.
        try (Connection admin = DriverManager.getConnection(config.getJdbcUrl(), PostgresState.USER, null);
             Statement create = admin.createStatement()) {
            create.execute("CREATE SCHEMA " + name);
        }
        HikariDataSource pool = new HikariDataSource(config);
        pools.put(name, pool);
        execute(pool, "CREATE TABLE stock (id INTEGER PRIMARY KEY, total BIGINT NOT NULL)");
        execute(pool, "INSERT INTO stock (id, total) VALUES (1, 0)");
        return pool;
    }

    private static void execute(DataSource pool, String sql) throws SQLException {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** Closes the sides and their pools, then drops the database. */
    @Override
    public void close() {
        if (inbox != null) {
            inbox.close();
        }
        if (camel != null) {
            camel.stop();
        }
        pools.values().forEach(HikariDataSource::close);
        try (Connection admin = DriverManager.getConnection(PostgresState.URL, PostgresState.USER, null);
             Statement drop = admin.createStatement()) {
            drop.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
        } catch (SQLException e) {
            throw new IllegalStateException("could not drop the benchmark's database " + database, e);
        }
    }
}
