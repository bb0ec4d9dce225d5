package dev.idempotent.inbox.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.JoinedContract;
import java.time.Instant;
import org.jdbi.v3.core.Jdbi;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.jdbc.AutoSave;

/**
 * The joined-call contract on PostgreSQL through a Hikari pool whose connections let pgjdbc set a
 * savepoint of its own before every statement ({@code autosave=always}): the inbox's savepoints
 * nest among the driver's, and the callers' connections are the pool's wrappers.
 */
class PostgresPooledJoinedContractTest extends JoinedContract {

    @Override
    protected InboxFixture openFixture() {
        return new Pooled(new PostgresFixture());
    }

    /** The fixture's schema, reached through a pool of autosaving connections. */
    private static final class Pooled implements InboxFixture {

        private final PostgresFixture database;
        private final HikariDataSource pool;
        private final Jdbi jdbi;

        Pooled(PostgresFixture database) {
            this.database = database;
            PGSimpleDataSource dataSource = PostgresFixture.dataSource(PostgresFixture.PORT,
                    "-c search_path=" + database.searchPath());
            dataSource.setAutosave(AutoSave.ALWAYS);
            HikariConfig config = new HikariConfig();
            config.setDataSource(dataSource);
            config.setMaximumPoolSize(24);
            this.pool = new HikariDataSource(config);
            this.jdbi = Jdbi.create(pool);
        }

        @Override
        public Jdbi jdbi() {
            return jdbi;
        }

        @Override
        public InboxBuilder<PostgresInbox> builder() {
            return PostgresInbox.builder(jdbi).tables(database.tables());
        }

        @Override
        public InboxTables tables() {
            return database.tables();
        }

        @Override
        public HeldLock holdWriteLock(String inbox, String id) {
            return database.holdWriteLock(inbox, id);
        }

        @Override
        public void insertReceivedRows(String inbox, String prefix, int count, Instant receivedAt) {
            database.insertReceivedRows(inbox, prefix, count, receivedAt);
        }

        @Override
        public boolean failedStatementAbortsTransaction() {
            return database.failedStatementAbortsTransaction();
        }

        @Override
        public void close() {
            pool.close();
            database.close();
        }
    }
}
