package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException.Kind;
import dev.idempotent.inbox.InboxStorageException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;

/**
 * Turns what the MariaDB driver, a connection pool and Jdbi throw into the inbox's exceptions, by
 * the server's error number and SQLState and by exception type. Message texts are never read:
 * they are translated, and they change between server versions.
 */
final class MariaDbErrors {

    // https://mariadb.com/kb/en/mariadb-error-code-reference/
    static final int LOCK_WAIT_TIMEOUT = 1205;
    static final int DEADLOCK = 1213;
    static final int OPTION_PREVENTS_STATEMENT = 1290; // --read-only, for users without READ_ONLY ADMIN
    static final int READ_ONLY_TRANSACTION = 1792;
    static final int READ_ONLY_MODE = 1836; // innodb_read_only
    static final int TABLE_READ_ONLY = 1036;
    static final int DISK_FULL = 1021;
    static final int TABLE_FULL = 1114;
    static final int NOT_KEYFILE = 1034;
    static final int CRASHED_ON_USAGE = 1194;
    static final int CRASHED_ON_REPAIR = 1195;
    static final int INDEX_CORRUPT = 1712;
    static final int TOO_MANY_CONNECTIONS = 1040;
    static final int SERVER_SHUTDOWN = 1053;
    static final int ABORTING_CONNECTION = 1152;
    static final int CONNECTION_KILLED = 1927;
    static final int SAVEPOINT_DOES_NOT_EXIST = 1305;
    static final int NO_SUCH_TABLE = 1146;

    private static final Set<Integer> READ_ONLY =
            Set.of(OPTION_PREVENTS_STATEMENT, READ_ONLY_TRANSACTION, READ_ONLY_MODE, TABLE_READ_ONLY);
    private static final Set<Integer> FULL = Set.of(DISK_FULL, TABLE_FULL);
    private static final Set<Integer> CORRUPT = Set.of(NOT_KEYFILE, CRASHED_ON_USAGE, CRASHED_ON_REPAIR, INDEX_CORRUPT);
    private static final Set<Integer> CONNECTION_GONE =
            Set.of(TOO_MANY_CONNECTIONS, SERVER_SHUTDOWN, ABORTING_CONNECTION, CONNECTION_KILLED);

    private MariaDbErrors() {}

    /** The first SQLException in {@code failure}'s cause chain, or {@code null} if there is none. */
    private static SQLException sql(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                return sql;
            }
        }
        return null;
    }

    /** The server's error number in {@code failure}'s cause chain, or 0 if there is none. */
    static int errorCode(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getErrorCode() != 0) {
                return sql.getErrorCode();
            }
        }
        return 0;
    }

    /** The first SQLState in {@code failure}'s cause chain, or {@code null} if there is none. */
    static String sqlState(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
        }
        return null;
    }

    /** The driver's own message if the cause chain has one, else {@code failure}'s message. */
    static String describe(Throwable failure) {
        SQLException sql = sql(failure);
        return sql != null ? sql.getMessage() : failure.getMessage();
    }

    /**
     * The inbox exception for {@code failure}, which happened while {@code doing} (a phrase such as
     * "claiming the id"), before any commit was attempted.
     */
    static InboxException translate(Exception failure, String doing) {
        int code = errorCode(failure);
        String state = sqlState(failure);
        String message = "MariaDB failed " + doing + " (error " + code + ", SQLState " + state + "): "
                + describe(failure);
        if (code == LOCK_WAIT_TIMEOUT) {
            return new InboxBusyException("a lock (another transaction's claim of the same id, or a row it holds)"
                    + " was not obtained within the busy timeout " + doing + "; nothing was applied and the call"
                    + " may be retried", failure);
        }
        if (code == NO_SUCH_TABLE) {
            // The inbox's own statements name only its tables: a joined connection to a database
            // the inbox was never set up in.
            return new InboxStorageException(InboxStorageException.Kind.SCHEMA_MISSING, "the inbox's tables are not"
                    + " in this connection's database; create them there (the inbox does on its first use of a"
                    + " database, or run schema-v1.sql) or join a connection to the inbox's database. " + message,
                    failure);
        }
        if (code == DEADLOCK) {
            return new InboxBusyException("MariaDB broke a deadlock by rolling this transaction back " + doing
                    + "; nothing was applied and the call may be retried", failure);
        }
        if (isConnectionLost(failure)) {
            return new InboxStorageException(Kind.UNAVAILABLE, message, failure);
        }
        if (READ_ONLY.contains(code)) {
            return new InboxStorageException(Kind.READ_ONLY, message, failure);
        }
        if (FULL.contains(code)) {
            return new InboxStorageException(Kind.DISK_FULL, message, failure);
        }
        if (CORRUPT.contains(code)) {
            return new InboxStorageException(Kind.CORRUPT, message, failure);
        }
        return new InboxStorageException(Kind.OTHER, message, failure);
    }

    /**
     * The inbox exception for {@code failure} to obtain a connection, which wrote nothing. A pool
     * that cannot hand one out in time (the driver's {@code MariaDbPoolDataSource}, while its
     * server is down or all its connections are taken) says so with neither an error number nor a
     * SQLState: the connection is unavailable, as when the driver cannot open one. That pool only
     * logs why, so a wrong password behind it is reported this way too. What the server said (a
     * wrong password, 28000 and 1045; an unknown database) is sorted as any error is.
     */
    static InboxException translateOpening(Exception failure, String doing) {
        if (sql(failure) != null && errorCode(failure) == 0 && sqlState(failure) == null) {
            return new InboxStorageException(Kind.UNAVAILABLE, "MariaDB failed " + doing + " (no connection"
                    + " could be had; nothing was applied and the call may be retried): " + describe(failure),
                    failure);
        }
        return translate(failure, doing);
    }

    /**
     * Whether a failed COMMIT is known not to have committed: the server answered it with an error
     * that rolled the transaction back (a deadlock, which a Galera cluster reports for a commit that
     * lost certification, or another transaction-rollback or constraint error) and the session
     * lives on. Anything else, above all a lost connection, leaves the outcome unknown.
     */
    static boolean rolledBackAtCommit(Throwable failure) {
        if (isConnectionLost(failure)) {
            return false;
        }
        String state = sqlState(failure);
        return errorCode(failure) == DEADLOCK
                || state != null && (state.startsWith("40") || state.startsWith("23"));
    }

    /** Whether the connection is gone or was refused, so nothing more can be sent on it. */
    static boolean isConnectionLost(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            // Pools report a connection they could not hand out this way, often without a SQLState.
            if (t instanceof SQLTransientConnectionException || t instanceof SQLNonTransientConnectionException) {
                return true;
            }
        }
        String state = sqlState(failure);
        return state != null && state.startsWith("08") || CONNECTION_GONE.contains(errorCode(failure));
    }
}
