package dev.idempotent.inbox.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * SpringInbox under a JDBC transaction manager on the real MariaDB, over a pool that hands out
 * autocommit off: a failed effect's savepoint leaves the transaction usable, and one id twice in a
 * transaction is applied once.
 */
class SpringJoinedMariaDbTest {

    private static final String SERVER = "jdbc:mariadb://" + PostgresSchema.environment("INBOX_MARIADB_HOST", "127.0.0.1")
            + ":" + PostgresSchema.environment("INBOX_MARIADB_PORT", "3306") + "/";
    private static final String USER = PostgresSchema.environment("INBOX_MARIADB_USER", "root");

    private final String database = "inbox_boot_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private HikariDataSource pool;
    private MariaDbInbox inbox;
    private SpringInbox spring;

    private static void execute(String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(SERVER + "test", USER, "");
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    @BeforeEach
    void open() throws SQLException {
        execute("CREATE DATABASE " + database);
        execute("CREATE TABLE " + database + ".stock (item VARCHAR(20) PRIMARY KEY, total BIGINT NOT NULL)");
        execute("INSERT INTO " + database + ".stock VALUES ('snack', 0)");
        pool = new HikariDataSource();
        pool.setJdbcUrl(SERVER + database + "?useAffectedRows=true");
        pool.setUsername(USER);
        pool.setMaximumPoolSize(2);
        pool.setAutoCommit(false);
        // The auto-configuration's Jdbi: its own transactions switch the pool's autocommit-off connections.
        inbox = MariaDbInbox.builder(InboxStores.jdbi(pool)).schema(SchemaMode.CREATE).build();
        spring = new SpringInbox(inbox, pool, transactions());
    }

    @AfterEach
    void close() throws SQLException {
        if (inbox != null) {
            inbox.close();
        }
        if (pool != null) {
            pool.close();
        }
        execute("DROP DATABASE IF EXISTS " + database);
    }

    private TransactionTemplate transactions() {
        return new TransactionTemplate(new DataSourceTransactionManager(pool));
    }

    private int addFive() {
        return JdbcClient.create(pool).sql("UPDATE stock SET total = total + 5 WHERE item = 'snack'").update();
    }

    private long total(String item) {
        return JdbcClient.create(pool).sql("SELECT total FROM stock WHERE item = ?").param(item).query(Long.class)
                .optional().orElse(-1L);
    }

    @Test
    void aFailedEffectLeavesTheTransactionUsableAndOnlyWhatCommittedIsCounted() {
        transactions().executeWithoutResult(status -> {
            JdbcClient.create(pool).sql("INSERT INTO stock VALUES ('own', 1)").update();
            assertThrows(IllegalStateException.class, () -> spring.apply("m-1", Content.of(5), tx -> {
                addFive();
                throw new IllegalStateException("effect failed");
            }));
            assertInstanceOf(Outcome.Applied.class, spring.apply("m-2", Content.of(5), tx -> addFive()));
        });

        assertEquals(5, total("snack"));
        assertEquals(1, total("own"));
        assertTrue(inbox.find("m-1").isEmpty());
        assertTrue(inbox.find("m-2").isPresent());
        assertEquals(1, inbox.stats().applied());
        assertInstanceOf(Outcome.Applied.class, transactions().execute(status -> spring.apply("m-1", Content.of(5), tx -> addFive())));
        assertEquals(10, total("snack"));
    }

    @Test
    void oneIdTwiceInATransactionIsAppliedOnce() {
        Outcome<?>[] outcomes = transactions().execute(status -> new Outcome<?>[] {
            spring.apply("t-1", Content.of(5), tx -> addFive()),
            spring.apply("t-1", Content.of(5), tx -> addFive())
        });

        assertInstanceOf(Outcome.Applied.class, outcomes[0]);
        assertInstanceOf(Outcome.Duplicate.class, outcomes[1]);
        assertEquals(5, total("snack"));
        assertEquals(1, inbox.stats().applied());
    }
}
