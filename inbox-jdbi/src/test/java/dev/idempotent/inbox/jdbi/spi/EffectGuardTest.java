package dev.idempotent.inbox.jdbi.spi;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.EffectBrokeTransactionException;
import java.nio.file.Path;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.SqlLogger;
import org.jdbi.v3.core.statement.SqlStatements;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The guard and the watcher on a real SQLite file, through Jdbi's own transaction calls. */
class EffectGuardTest {

    @TempDir
    Path directory;
    private Jdbi jdbi;

    @BeforeEach
    void open() {
        jdbi = EffectGuard.install(Jdbi.create("jdbc:sqlite:" + directory.resolve("guard.db")));
        jdbi.useHandle(handle -> handle.execute("CREATE TABLE t (x INTEGER)"));
    }

    private long rows() {
        return jdbi.withHandle(handle -> handle.createQuery("SELECT COUNT(*) FROM t").mapTo(Long.class).one());
    }

    @Test
    void commitAndRollbackAreRefusedWhileGuardedAndRecorded() {
        try (Handle handle = jdbi.open()) {
            handle.begin();
            handle.execute("INSERT INTO t VALUES (1)");
            EffectGuard guard = EffectGuard.enter(handle);
            assertThrows(EffectBrokeTransactionException.class, handle::commit);
            assertThrows(EffectBrokeTransactionException.class, handle::rollback);
            assertTrue(guard.exit(), "the attempt is recorded even though it was caught");
            assertTrue(handle.isInTransaction(), "the refused calls changed nothing");
            handle.commit();
        }
        assertEquals(1, rows());
    }

    @Test
    void anUnguardedHandleAndAGuardThatSawNothingBehaveAsJdbi() {
        try (Handle handle = jdbi.open(); Handle other = jdbi.open()) {
            EffectGuard guard = EffectGuard.enter(other);
            handle.begin();
            handle.execute("INSERT INTO t VALUES (1)");
            assertDoesNotThrow(handle::commit, "only the guarded handle is refused");
            assertFalse(guard.exit());
            other.begin();
            assertDoesNotThrow(other::rollback, "after exit the handle is free again");
        }
        assertEquals(1, rows());
    }

    @Test
    void aNestedGuardOnTheSameHandleLeavesTheOuterOneInPlace() {
        try (Handle handle = jdbi.open()) {
            handle.begin();
            EffectGuard outer = EffectGuard.enter(handle);
            EffectGuard inner = EffectGuard.enter(handle);
            assertFalse(inner.exit());
            assertThrows(EffectBrokeTransactionException.class, handle::commit);
            assertTrue(outer.exit());
            handle.rollback();
        }
    }

    @Test
    void aNewTransactionInsideTheGuardIsRefusedButAJoinedOneRuns() {
        try (Handle handle = jdbi.open()) {
            EffectGuard guard = EffectGuard.enter(handle);
            assertThrows(EffectBrokeTransactionException.class, () -> handle.useTransaction(h -> h.execute(
                    "INSERT INTO t VALUES (1)")));
            assertTrue(guard.exit());
            handle.begin();
            EffectGuard again = EffectGuard.enter(handle);
            handle.useTransaction(h -> h.execute("INSERT INTO t VALUES (2)"));
            assertFalse(again.exit(), "inTransaction inside an open transaction joins it and ends nothing");
            handle.commit();
        }
        assertEquals(1, rows());
    }

    @Test
    void theWatcherRemembersTheLastFailureAndGivesTheLoggerBack() {
        try (Handle handle = jdbi.open()) {
            SqlLogger own = handle.getConfig(SqlStatements.class).getSqlLogger();
            FailedStatements watcher = FailedStatements.watch(handle);
            handle.execute("CREATE TABLE u (x INTEGER PRIMARY KEY)");
            handle.execute("INSERT INTO u VALUES (1)");
            assertThrows(RuntimeException.class, () -> handle.execute("INSERT INTO u VALUES (1)"));
            assertTrue(watcher.last().getMessage().contains("UNIQUE"), watcher.last().getMessage());
            watcher.forget();
            assertEquals(null, watcher.last());
            watcher.stop();
            assertEquals(own, handle.getConfig(SqlStatements.class).getSqlLogger());
        }
    }
}
