package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException.Kind;
import dev.idempotent.inbox.InboxStorageException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The SQLState table, for the states a test cannot provoke on demand against a real server (a
 * full disk, a deadlock whose victim PostgreSQL picks). Each failure is built as the driver
 * reports it: an {@link SQLException} carrying the state, wrapped once more.
 */
class PostgresErrorsTest {

    private static RuntimeException failure(String sqlState) {
        return new RuntimeException("wrapped", new SQLException("server message", sqlState));
    }

    @ParameterizedTest
    @CsvSource({"55P03", "40001", "40P01"})
    void lockAndSerializationFailuresAreBusyAndSayNothingWasApplied(String sqlState) {
        InboxException translated = PostgresErrors.translate(failure(sqlState), "claiming the id");

        InboxBusyException busy = assertInstanceOf(InboxBusyException.class, translated);
        assertTrue(busy.getMessage().contains("nothing was applied"), busy.getMessage());
    }

    @ParameterizedTest
    @CsvSource({
        "25006, READ_ONLY",
        "53100, DISK_FULL",
        "08006, UNAVAILABLE",
        "08001, UNAVAILABLE",
        "57P01, UNAVAILABLE",
        "53300, UNAVAILABLE",
        "XX001, CORRUPT",
        "42P01, SCHEMA_MISSING",
    })
    void storageFailuresAreSortedBySqlState(String sqlState, Kind kind) {
        InboxException translated = PostgresErrors.translate(failure(sqlState), "claiming the id");

        assertEquals(kind, assertInstanceOf(InboxStorageException.class, translated).kind());
    }

    @Test
    void poolTimeoutWithoutSqlStateIsUnavailable() {
        RuntimeException failure = new RuntimeException(new SQLTransientConnectionException("pool timed out"));

        InboxException translated = PostgresErrors.translate(failure, "opening a connection");

        assertEquals(Kind.UNAVAILABLE, assertInstanceOf(InboxStorageException.class, translated).kind());
    }

    @ParameterizedTest
    @CsvSource({"23505", "23503", "40001", "40P01", "P0001", "25P02"})
    void commitAnsweredWithAnErrorThatRolledBackIsDefinite(String sqlState) {
        assertTrue(PostgresErrors.rolledBackAtCommit(failure(sqlState)));
    }

    @ParameterizedTest
    @CsvSource({"08006", "08003", "57P01", "57P02", "XX000", "58030", "53100"})
    void commitWithoutAClearAnswerIsUnknown(String sqlState) {
        assertFalse(PostgresErrors.rolledBackAtCommit(failure(sqlState)));
    }

    @Test
    void commitFailureWithoutSqlStateIsUnknown() {
        assertFalse(PostgresErrors.rolledBackAtCommit(new RuntimeException("socket closed")));
    }

    @Test
    void busyTimeoutBecomesALockTimeoutThatNeverMeansForever() {
        assertEquals("1ms", PostgresStore.lockTimeout(Duration.ZERO), "lock_timeout 0 would wait forever");
        assertEquals("1ms", PostgresStore.lockTimeout(Duration.ofNanos(1)));
        assertEquals("200ms", PostgresStore.lockTimeout(Duration.ofMillis(200)));
        assertEquals("2ms", PostgresStore.lockTimeout(Duration.ofNanos(1_500_000)), "rounded up");
        assertEquals("3600000ms", PostgresStore.lockTimeout(Duration.ofHours(1)));
    }

    @Test
    void failureWithoutStateOnAClosedConnectionIsUnavailable() throws SQLException {
        // What HikariCP throws for every call on a connection it has evicted as broken.
        SQLException closedProxy = new SQLException("Connection is closed");
        try (Connection open = PostgresFixture.dataSource(PostgresFixture.PORT, null).getConnection()) {
            InboxStorageException other = assertInstanceOf(InboxStorageException.class,
                    PostgresErrors.translate(closedProxy, "rolling back", open));
            assertEquals(Kind.OTHER, other.kind(), "an open connection: the failure alone decides");

            open.close();
            InboxStorageException lost = assertInstanceOf(InboxStorageException.class,
                    PostgresErrors.translate(closedProxy, "rolling back", open));
            assertEquals(Kind.UNAVAILABLE, lost.kind());
        }
    }
}
