package dev.idempotent.inbox.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * What the MariaDB benchmark needs: two databases of its own (one for the inbox, one for the
 * baseline, so their {@code stock} rows never lock each other), each with the inbox's tables and a
 * one-row {@code stock} table, reached through a HikariCP pool whose connections count affected
 * rows, as an application's would. Both databases are dropped on {@link #close}.
 *
 * <p>The server is {@code -Dinbox.bench.mariadb.host} and {@code -Dinbox.bench.mariadb.port} as
 * {@code -Dinbox.bench.mariadb.user} with {@code -Dinbox.bench.mariadb.password}. Their defaults
 * are the tests' server: 127.0.0.1:3306 as {@code root} with an empty password, or what
 * {@code INBOX_MARIADB_HOST}, {@code INBOX_MARIADB_PORT}, {@code INBOX_MARIADB_USER} and
 * {@code INBOX_MARIADB_PASSWORD} say.
 */
public abstract class MariaDbState {

    static final String SERVER = System.getProperty("inbox.bench.mariadb.host", environment("INBOX_MARIADB_HOST", "127.0.0.1"))
            + ":" + System.getProperty("inbox.bench.mariadb.port", environment("INBOX_MARIADB_PORT", "3306"));
    static final String USER = System.getProperty("inbox.bench.mariadb.user", environment("INBOX_MARIADB_USER", "root"));
    static final String PASSWORD = System.getProperty("inbox.bench.mariadb.password",
            environment("INBOX_MARIADB_PASSWORD", ""));
    static final int POOL_SIZE = PostgresState.POOL_SIZE;

    private final AtomicLong sequence = new AtomicLong();
    private final long seed = ThreadLocalRandom.current().nextLong();
    private String inboxDatabase;
    private String jdbcDatabase;
    private HikariDataSource inboxPool;
    private HikariDataSource jdbcPool;
    private MariaDbInbox inbox;
    private HandWrittenMariaDb jdbc;

    private static String environment(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private static String url(String database) {
        return "jdbc:mariadb://" + SERVER + "/" + database + "?useAffectedRows=true";
    }

    /** Creates both databases, the inbox and the baseline. */
    protected void open() throws SQLException {
        String suffix = HexFormat.of().formatHex(new SecureRandom().generateSeed(6));
        inboxDatabase = "inbox_bench_i" + suffix;
        jdbcDatabase = "inbox_bench_j" + suffix;
        try (Connection admin = DriverManager.getConnection(url(""), USER, PASSWORD);
             Statement create = admin.createStatement()) {
            create.execute("CREATE DATABASE " + inboxDatabase + " CHARACTER SET utf8mb4");
            create.execute("CREATE DATABASE " + jdbcDatabase + " CHARACTER SET utf8mb4");
        }
        inboxPool = pool(inboxDatabase, null);
        // The isolation level the inbox sets for each of its transactions, here once per connection.
        jdbcPool = pool(jdbcDatabase, "TRANSACTION_READ_COMMITTED");
        // The baseline writes the inbox's own table, created the way the inbox creates it.
        MariaDbInbox.builder(Jdbi.create(jdbcPool)).build().close();
        Jdbi.create(jdbcPool).useHandle(MariaDbState::createStock);
        inbox = MariaDbInbox.builder(Jdbi.create(inboxPool)).name(SqliteState.INBOX).build();
        inbox.jdbi().useHandle(MariaDbState::createStock);
        jdbc = new HandWrittenMariaDb(jdbcPool, SqliteState.INBOX);
    }

    private static void createStock(Handle handle) {
        handle.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total BIGINT NOT NULL) ENGINE=InnoDB");
        handle.execute("INSERT INTO stock (id, total) VALUES (1, 0)");
    }

    private static HikariDataSource pool(String database, String isolation) {
        HikariConfig config = new HikariConfig();
        if (isolation != null) {
            config.setTransactionIsolation(isolation);
        }
        config.setJdbcUrl(url(database));
        config.setUsername(USER);
        config.setPassword(PASSWORD);
        config.setMaximumPoolSize(POOL_SIZE);
        config.setPoolName(database);
        return new HikariDataSource(config);
    }

    /** A new id; the sequence is shared by all threads of the benchmark. */
    String nextId() {
        return Ids.random(seed + sequence.incrementAndGet());
    }

    /** The inbox as a user calls it, the effect written with Jdbi. */
    Outcome<Integer> inboxApply(String id) {
        return inbox.apply(id, Content.of(SqliteState.QUANTITY),
                tx -> tx.execute(HandWrittenMariaDb.UPDATE, SqliteState.QUANTITY));
    }

    /** The names of the two databases, kept after {@link #close} so that a test can see them gone. */
    List<String> databases() {
        return List.of(inboxDatabase, jdbcDatabase);
    }

    MariaDbInbox inbox() {
        return inbox;
    }

    HandWrittenMariaDb jdbc() {
        return jdbc;
    }

    /** Closes the inbox and the pools, then drops both databases. */
    protected void close() {
        try {
            if (inbox != null) {
                inbox.close();
            }
        } finally {
            try (HikariDataSource admin = inboxPool) {
                if (admin != null) {
                    Jdbi.create(admin).useHandle(handle -> {
                        handle.execute("DROP DATABASE IF EXISTS " + inboxDatabase);
                        handle.execute("DROP DATABASE IF EXISTS " + jdbcDatabase);
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
