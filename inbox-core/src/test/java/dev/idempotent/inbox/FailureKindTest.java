package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class FailureKindTest {

    @Test
    void busyAndUnknownOutcomesAreRetryableEvenWhenWrapped() {
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new InboxBusyException("busy", null)));
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new OutcomeUnknownException("lost", null)));
        // As a listener container wraps what the listener threw.
        assertTrue(FailureKind.isRetryable(new RuntimeException("listener failed",
                new InboxBusyException("busy", null))));
    }

    @Test
    void storageFailuresAreJudgedByTheirKind() {
        assertEquals(FailureKind.RETRYABLE, storage(InboxStorageException.Kind.UNAVAILABLE, null));
        assertEquals(FailureKind.RETRYABLE, storage(InboxStorageException.Kind.DISK_FULL, null));
        assertEquals(FailureKind.PERMANENT, storage(InboxStorageException.Kind.READ_ONLY, null));
        assertEquals(FailureKind.PERMANENT, storage(InboxStorageException.Kind.CORRUPT, null));
        assertEquals(FailureKind.PERMANENT, storage(InboxStorageException.Kind.NEWER_SCHEMA, null));
        assertEquals(FailureKind.EFFECT, storage(InboxStorageException.Kind.OTHER, new SQLException("syntax", "42601")));
        assertEquals(FailureKind.RETRYABLE, storage(InboxStorageException.Kind.OTHER, new SQLException("deadlock", "40P01")));
    }

    @Test
    void refusalsOfTheMessageArePermanent() {
        assertEquals(FailureKind.PERMANENT, FailureKind.of(new InvalidMessageException(
                InvalidMessageException.Problem.ID_BLANK, "blank id")));
        assertEquals(FailureKind.PERMANENT, FailureKind.of(new StaleMessageException(
                "a-1", Instant.EPOCH, Instant.EPOCH.plusSeconds(1), "stale")));
        assertEquals(FailureKind.PERMANENT, FailureKind.of(new EffectBrokeTransactionException("committed", null)));
        assertEquals(FailureKind.PERMANENT, FailureKind.of(new InboxException("inbox 'x' is closed")));
    }

    @Test
    void anEffectsOwnExceptionIsTheApplicationsToJudgeUnlessTheDatabaseSaysTransient() {
        assertEquals(FailureKind.EFFECT, FailureKind.of(new IllegalStateException("no such item")));
        assertEquals(FailureKind.EFFECT, FailureKind.of(new SQLException("unique violation", "23505")));
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new RuntimeException(new SQLException("serialization", "40001"))));
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new SQLException("connection reset", "08006")));
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new SQLTransientConnectionException("pool timeout")));
        assertFalse(FailureKind.isRetryable(new SQLException("no state")));
    }

    @Test
    void aLockTimeoutIsRetryableByItsVendorCodeWhereverItIsThrown() {
        // The inbox sets the lock timeout; the effect's statement waited it out (the servers' own
        // exceptions are met in inbox-rabbitmq's LockTimeoutTest).
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new RuntimeException(
                new SQLException("canceling statement due to lock timeout", "55P03"))));
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new RuntimeException(
                new SQLException("Lock wait timeout exceeded; try restarting transaction", "HY000", 1205))));
        assertEquals(FailureKind.RETRYABLE, storage(InboxStorageException.Kind.OTHER,
                new SQLException("lock timeout", "55P03")));
        // The same number with another state is another vendor's error.
        assertEquals(FailureKind.EFFECT, FailureKind.of(new SQLException("other", "42000", 1205)));
        assertEquals(FailureKind.EFFECT, FailureKind.of(new SQLException("duplicate", "23000", 1062)));
    }

    @Test
    void anErrorDuringCommitIsRetryable() {
        // A joined call's commit on a Galera node that lost the primary component: the caller's
        // commit exception, whose outcome is unknown, and a resend is deduplicated.
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new RuntimeException("committing", new SQLException(
                "Got error 6 \"No such device or address\" during COMMIT", "HY000", 1180))));
        assertEquals(FailureKind.RETRYABLE, storage(InboxStorageException.Kind.OTHER,
                new SQLException("Error while appending streaming replication fragment", "HY000", 1180)));
        // Read by code and state, never by the message.
        assertEquals(FailureKind.EFFECT, FailureKind.of(new SQLException("Got error during COMMIT", "HY000", 1181)));
        assertEquals(FailureKind.EFFECT, FailureKind.of(new SQLException("other", "42000", 1180)));
    }

    @Test
    void aConnectionTheServerEndedIsRetryable() {
        // pg_terminate_backend, a shutdown or a failover while the effect's statement ran.
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new RuntimeException(
                new SQLException("terminating connection due to administrator command", "57P01"))));
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new SQLException("crash", "57P02")));
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(new SQLException("starting up", "57P03")));
        assertEquals(FailureKind.EFFECT, FailureKind.of(new SQLException("canceled by the user", "57014")));
    }

    @Test
    void aCauseChainThatLoopsEnds() {
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b);
        assertEquals(FailureKind.EFFECT, FailureKind.of(a));
        assertThrows(NullPointerException.class, () -> FailureKind.of(null));
    }

    private static FailureKind storage(InboxStorageException.Kind kind, Throwable cause) {
        return FailureKind.of(new InboxStorageException(kind, "failed", cause));
    }
}
