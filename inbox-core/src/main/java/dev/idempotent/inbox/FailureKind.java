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
     * tried again: the write lock was busy, the database reported a deadlock or a serialization
     * failure, the connection was lost, the commit's result never came back, or the disk was full.
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
     * or a {@link SQLTransientException} or {@link SQLRecoverableException}, is
     * {@link #RETRYABLE}, as when an effect's own statement lost a deadlock; anything else is
     * {@link #EFFECT}.
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

    private static boolean isTransientSql(Throwable t) {
        if (t instanceof SQLTransientException || t instanceof SQLRecoverableException) {
            return true;
        }
        if (t instanceof SQLException sql && sql.getSQLState() != null) {
            String state = sql.getSQLState();
            return state.startsWith("40") || state.startsWith("08");
        }
        return false;
    }
}
