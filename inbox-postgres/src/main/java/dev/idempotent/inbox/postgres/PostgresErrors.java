package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException.Kind;
import dev.idempotent.inbox.InboxStorageException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;

/**
 * Turns what the PostgreSQL driver, a connection pool and Jdbi throw into the inbox's exceptions,
 * by SQLState and exception type. Message texts are never read: they are translated, and they
 * change between server versions.
 */
final class PostgresErrors {

    // https://www.postgresql.org/docs/current/errcodes-appendix.html
    static final String SERIALIZATION_FAILURE = "40001";
    static final String DEADLOCK_DETECTED = "40P01";
    static final String LOCK_NOT_AVAILABLE = "55P03";
    static final String READ_ONLY_SQL_TRANSACTION = "25006";
    static final String IN_FAILED_SQL_TRANSACTION = "25P02";
    static final String DISK_FULL = "53100";
    static final String TOO_MANY_CONNECTIONS = "53300";
    static final String ADMIN_SHUTDOWN = "57P01";
    static final String CRASH_SHUTDOWN = "57P02";
    static final String CANNOT_CONNECT_NOW = "57P03";
    static final String DATA_CORRUPTED = "XX001";
    static final String INDEX_CORRUPTED = "XX002";
    static final String UNDEFINED_TABLE = "42P01";

    private PostgresErrors() {}

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
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                return sql.getMessage();
            }
        }
        return failure.getMessage();
    }

    /**
     * The inbox exception for {@code failure}, which happened while {@code doing} (a phrase such as
     * "claiming the id"), before any commit was attempted.
     */
    static InboxException translate(Exception failure, String doing) {
        String state = sqlState(failure);
        String message = "PostgreSQL failed " + doing + " (SQLState " + state + "): " + describe(failure);
        if (isBusy(state)) {
            return new InboxBusyException(busyReason(state) + " " + doing + "; nothing was applied and the call"
                    + " may be retried", failure);
        }
        if (isConnectionLost(failure, state)) {
            return new InboxStorageException(Kind.UNAVAILABLE, message, failure);
        }
        if (state == null) {
            return new InboxStorageException(Kind.OTHER, message, failure);
        }
        return switch (state) {
            case READ_ONLY_SQL_TRANSACTION -> new InboxStorageException(Kind.READ_ONLY, message, failure);
            case DISK_FULL -> new InboxStorageException(Kind.DISK_FULL, message, failure);
            case DATA_CORRUPTED, INDEX_CORRUPTED -> new InboxStorageException(Kind.CORRUPT, message, failure);
            // The inbox's own statements name only its tables: a joined connection to a database
            // (or a search_path) the inbox was never set up in.
            case UNDEFINED_TABLE -> new InboxStorageException(Kind.SCHEMA_MISSING, "the inbox's tables are not"
                    + " in the database and search_path of this connection; create them there (the inbox does on"
                    + " its first use of a database, or run schema-v1.sql) or join a connection to the inbox's"
                    + " database. PostgreSQL failed " + doing + ": " + describe(failure), failure);
            default -> new InboxStorageException(Kind.OTHER, message, failure);
        };
    }

    /**
     * Like {@link #translate(Exception, String)}, for a failure on {@code connection}: when the
     * connection is closed already, the connection was lost whatever the failure says. A pool
     * that has evicted a broken connection answers every later call on it with an
     * {@code SQLException} without a SQLState (HikariCP's "Connection is closed").
     */
    static InboxException translate(Exception failure, String doing, Connection connection) {
        InboxException translated = translate(failure, doing);
        if (translated instanceof InboxStorageException storage && storage.kind() == Kind.OTHER && isClosed(connection)) {
            return new InboxStorageException(Kind.UNAVAILABLE, storage.getMessage(), failure);
        }
        return translated;
    }

    private static boolean isClosed(Connection connection) {
        try {
            return connection.isClosed();
        } catch (SQLException e) {
            return true;
        }
    }

    /**
     * Whether a failed COMMIT is known not to have committed: the server answered it with an error
     * that rolled the transaction back (a deferred constraint, a serialization failure, a deferred
     * trigger that raised, or a transaction that had already failed) and the session lives on.
     * Anything else, above all a lost connection, leaves the outcome unknown.
     */
    static boolean rolledBackAtCommit(Throwable failure) {
        String state = sqlState(failure);
        if (state == null || isConnectionLost(failure, state)) {
            return false;
        }
        return state.startsWith("23") // integrity constraint violation
                || state.startsWith("40") // transaction rollback
                || state.startsWith("P0") // PL/pgSQL raise
                || state.equals(IN_FAILED_SQL_TRANSACTION);
    }

    private static boolean isBusy(String state) {
        return LOCK_NOT_AVAILABLE.equals(state)
                || SERIALIZATION_FAILURE.equals(state)
                || DEADLOCK_DETECTED.equals(state);
    }

    private static String busyReason(String state) {
        return switch (state) {
            case LOCK_NOT_AVAILABLE -> "a lock (another transaction's claim of the same id, or a row it holds)"
                    + " was not obtained within the busy timeout";
            case DEADLOCK_DETECTED -> "PostgreSQL broke a deadlock by aborting this transaction";
            default -> "PostgreSQL aborted this transaction because of a concurrent update";
        };
    }

    /**
     * Whether {@code failure} says the connection was lost, or {@code connection} is closed already:
     * then the server may have run what was sent without its answer arriving.
     */
    static boolean connectionLost(Throwable failure, Connection connection) {
        return isConnectionLost(failure, sqlState(failure)) || isClosed(connection);
    }

    private static boolean isConnectionLost(Throwable failure, String state) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            // Pools report a connection they could not hand out this way, often without a SQLState.
            if (t instanceof SQLTransientConnectionException || t instanceof SQLNonTransientConnectionException) {
                return true;
            }
        }
        if (state == null) {
            return false;
        }
        return state.startsWith("08") // connection exception
                || state.equals(ADMIN_SHUTDOWN)
                || state.equals(CRASH_SHUTDOWN)
                || state.equals(CANNOT_CONNECT_NOW)
                || state.equals(TOO_MANY_CONNECTIONS);
    }
}
