package dev.idempotent.inbox;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * What a failure thrown by {@link Inbox#apply} (or out of an effect) means for a retry: the
 * classifier a broker's error handler asks before it redelivers, dead-letters or gives up.
 *
 * <pre>{@code
 * catch (Exception e) {
 *     switch (FailureKind.of(e)) {
 *         case RETRYABLE -> requeueAfterBackoff(delivery);
 *         case PERMANENT -> deadLetter(delivery);
 *         case EFFECT -> retryUpToLimitThenDeadLetter(delivery);
 *     }
 * }
 * }</pre>
 *
 * <p>Retrying a message with the same id is always safe with an inbox: if an earlier attempt did
 * commit, the retry answers {@link Outcome.Duplicate}. The question is only whether a retry can
 * succeed where this attempt failed.
 */
public enum FailureKind {

    /**
     * Nothing was applied, or it is unknown whether it was, and the same message may succeed when
     * tried again: the write lock was busy, a lock was not obtained within the lock timeout the
     * inbox set for its transaction (in the effect's own statements too), the database reported a
     * deadlock or a serialization failure, the connection was lost, the commit's result never came
     * back, or the disk was full.
     */
    RETRYABLE,

    /**
     * The message will never be applied as it is: its id or content is invalid, it is older than
     * the inbox can judge, the effect broke the transaction it was given, the inbox is closed, or
     * the database refuses the inbox for good (read-only, corrupt, a newer or a missing schema).
     */
    PERMANENT,

    /**
     * The effect's own exception, or one the inbox did not raise and cannot judge: the
     * application's policy decides, typically a bounded number of retries and then a dead letter.
     */
    EFFECT;

    /**
     * Classifies {@code failure} by the first inbox exception in its cause chain (a listener
     * container may have wrapped it). Without one, a {@link SQLException} in the chain whose
     * SQLState is of class {@code 40} (serialization failure, deadlock) or {@code 08} (connection),
     * a connection the server ended (PostgreSQL's {@code 57P01} to {@code 57P03}), a lock timeout
     * (PostgreSQL's SQLState {@code 55P03}, MariaDB's and MySQL's error 1205), an error during a
     * commit whose outcome is unknown (MariaDB's and MySQL's error 1180, as in a joined call whose
     * commit meets a Galera node that lost the primary component), or a
     * {@link SQLTransientException} or {@link SQLRecoverableException}, is {@link #RETRYABLE}, as
     * when an effect's own statement lost a deadlock or waited out the lock timeout the inbox set
     * for its transaction; anything else is {@link #EFFECT}. The exception is only read, never
     * changed or wrapped.
     *
     * @param failure what was thrown; not {@code null}
     * @return its kind, never {@code null}
     */
    public static FailureKind of(Throwable failure) {
        if (failure == null) {
            throw new NullPointerException("failure");
        }
        // A cause chain may loop back on itself; each throwable is looked at once.
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        boolean transientSql = false;
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof InboxException inboxFailure) {
                return ofInbox(inboxFailure);
            }
            transientSql |= isTransientSql(t);
        }
        return transientSql ? RETRYABLE : EFFECT;
    }

    /**
     * {@return whether {@code failure} is {@link #RETRYABLE}}; for error handlers that take a
     * predicate, such as Spring Kafka's {@code DefaultErrorHandler}
     *
     * @param failure what was thrown; not {@code null}
     */
    public static boolean isRetryable(Throwable failure) {
        return of(failure) == RETRYABLE;
    }

    private static FailureKind ofInbox(InboxException failure) {
        if (failure instanceof InboxBusyException || failure instanceof OutcomeUnknownException) {
            return RETRYABLE;
        }
        if (failure instanceof InboxStorageException storage) {
            return switch (storage.kind()) {
                case UNAVAILABLE, DISK_FULL -> RETRYABLE;
                case READ_ONLY, CORRUPT, NEWER_SCHEMA, SCHEMA_MISSING -> PERMANENT;
                // An error the adapter could not name may be the effect's own statement failing.
                case OTHER -> transientCause(storage) ? RETRYABLE : EFFECT;
            };
        }
        return PERMANENT;
    }

    private static boolean transientCause(Throwable failure) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure.getCause(); t != null && seen.add(t); t = t.getCause()) {
            if (isTransientSql(t)) {
                return true;
            }
        }
        return false;
    }

    // PostgreSQL's lock_not_available: lock_timeout expired, or a NOWAIT lock was taken.
    private static final String POSTGRES_LOCK_NOT_AVAILABLE = "55P03";
    // PostgreSQL's admin_shutdown, crash_shutdown, cannot_connect_now: the server ended this
    // connection (pg_terminate_backend, a shutdown, a failover) or is starting.
    private static final Set<String> POSTGRES_SERVER_GOING = Set.of("57P01", "57P02", "57P03");
    // MariaDB's and MySQL's ER_LOCK_WAIT_TIMEOUT (innodb_lock_wait_timeout), sent with SQLState HY000.
    private static final int MARIADB_LOCK_WAIT_TIMEOUT = 1205;
    // MariaDB's and MySQL's ER_ERROR_DURING_COMMIT, sent with SQLState HY000, as a Galera node that
    // lost the primary component answers a COMMIT: whether it committed is unknown, and a resend
    // tells.
    private static final int MARIADB_ERROR_DURING_COMMIT = 1180;
    private static final String GENERAL_ERROR = "HY000";

    private static boolean isTransientSql(Throwable t) {
        if (t instanceof SQLTransientException || t instanceof SQLRecoverableException) {
            return true;
        }
        if (t instanceof SQLException sql && sql.getSQLState() != null) {
            String state = sql.getSQLState();
            // The inbox sets the lock timeout of every transaction it runs, so a statement that
            // waited it out failed for the inbox's reason, not the effect's: a later try may get
            // the lock. The vendor's code is read with the state, never the message.
            return state.startsWith("40") || state.startsWith("08") || state.equals(POSTGRES_LOCK_NOT_AVAILABLE)
                    || POSTGRES_SERVER_GOING.contains(state)
                    || state.equals(GENERAL_ERROR) && (sql.getErrorCode() == MARIADB_LOCK_WAIT_TIMEOUT
                            || sql.getErrorCode() == MARIADB_ERROR_DURING_COMMIT);
        }
        return false;
    }
}
