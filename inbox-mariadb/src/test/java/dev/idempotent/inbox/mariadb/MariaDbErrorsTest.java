package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException.Kind;
import dev.idempotent.inbox.InboxStorageException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The error table, for the errors a test cannot provoke on demand against the test server as root (a
 * full disk, the server's --read-only, which root is exempt from, a crashed table). Each failure is
 * built as the driver reports it: an {@link SQLException} carrying the SQLState and the server's
 * error number, wrapped once more.
 */
class MariaDbErrorsTest {

    private static RuntimeException failure(String sqlState, int code) {
        return new RuntimeException("wrapped", new SQLException("server message", sqlState, code));
    }

    @ParameterizedTest
    @CsvSource({"HY000, 1205", "40001, 1213"})
    void lockWaitTimeoutsAndDeadlocksAreBusyAndSayNothingWasApplied(String sqlState, int code) {
        InboxException translated = MariaDbErrors.translate(failure(sqlState, code), "claiming the id");

        InboxBusyException busy = assertInstanceOf(InboxBusyException.class, translated);
        assertTrue(busy.getMessage().contains("nothing was applied"), busy.getMessage());
    }

    @ParameterizedTest
    @CsvSource({
        "HY000, 1290, READ_ONLY",
        "25006, 1792, READ_ONLY",
        "HY000, 1836, READ_ONLY",
        "HY000, 1021, DISK_FULL",
        "HY000, 1114, DISK_FULL",
        "08000, 0, UNAVAILABLE",
        "08S01, 1053, UNAVAILABLE",
        "08004, 1040, UNAVAILABLE",
        "70100, 1927, UNAVAILABLE",
        "HY000, 1194, CORRUPT",
        "HY000, 1712, CORRUPT",
        "42S02, 1146, SCHEMA_MISSING",
        "22001, 1406, OTHER",
    })
    void storageFailuresAreSortedByErrorNumberAndSqlState(String sqlState, int code, Kind kind) {
        InboxException translated = MariaDbErrors.translate(failure(sqlState, code), "claiming the id");

        assertEquals(kind, assertInstanceOf(InboxStorageException.class, translated).kind());
    }

    @Test
    void poolTimeoutWithoutSqlStateIsUnavailable() {
        RuntimeException failure = new RuntimeException(new SQLTransientConnectionException("pool timed out"));

        InboxException translated = MariaDbErrors.translate(failure, "opening a connection");

        assertEquals(Kind.UNAVAILABLE, assertInstanceOf(InboxStorageException.class, translated).kind());
    }

    @Test
    void aConnectionNotHadWithoutAnErrorNumberOrSqlStateIsUnavailable() {
        // The driver's MariaDbPoolDataSource: "No connection available within the specified time".
        RuntimeException failure = new RuntimeException(new SQLException("no connection available"));

        InboxException translated = MariaDbErrors.translateOpening(failure, "opening a connection");

        assertEquals(Kind.UNAVAILABLE, assertInstanceOf(InboxStorageException.class, translated).kind());
    }

    @ParameterizedTest
    @CsvSource({"28000, 1045, OTHER", "42000, 1049, OTHER", "08004, 1040, UNAVAILABLE"})
    void aConnectionTheServerRefusedIsSortedAsAnyError(String sqlState, int code, Kind kind) {
        InboxException translated = MariaDbErrors.translateOpening(failure(sqlState, code), "opening a connection");

        assertEquals(kind, assertInstanceOf(InboxStorageException.class, translated).kind());
    }

    @ParameterizedTest
    @CsvSource({"40001, 1213", "23000, 1062", "23000, 1452"})
    void commitAnsweredWithAnErrorThatRolledBackIsDefinite(String sqlState, int code) {
        assertTrue(MariaDbErrors.rolledBackAtCommit(failure(sqlState, code)));
    }

    @ParameterizedTest
    @CsvSource({"08000, 0", "08S01, 1053", "70100, 1927", "HY000, 1180", "HY000, 1021"})
    void commitWithoutAClearAnswerIsUnknown(String sqlState, int code) {
        assertFalse(MariaDbErrors.rolledBackAtCommit(failure(sqlState, code)));
    }

    @Test
    void commitFailureWithoutSqlStateIsUnknown() {
        assertFalse(MariaDbErrors.rolledBackAtCommit(new RuntimeException("socket closed")));
    }

    @Test
    void busyTimeoutBecomesWholeSecondsOfLockWaitRoundedUpAndNeverNone() {
        assertEquals(1, MariaDbStore.lockWaitSeconds(Duration.ZERO), "MySQL takes nothing below 1");
        assertEquals(1, MariaDbStore.lockWaitSeconds(Duration.ofMillis(200)));
        assertEquals(1, MariaDbStore.lockWaitSeconds(Duration.ofSeconds(1)));
        assertEquals(2, MariaDbStore.lockWaitSeconds(Duration.ofMillis(1001)), "rounded up");
        assertEquals(5, MariaDbStore.lockWaitSeconds(Duration.ofSeconds(5)));
        assertEquals(3600, MariaDbStore.lockWaitSeconds(Duration.ofHours(1)));
    }
}
