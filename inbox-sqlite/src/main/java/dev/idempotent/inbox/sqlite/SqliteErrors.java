package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxStorageException.Kind;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/** Turns what sqlite-jdbc and Jdbi throw into the inbox's exceptions, by SQLite result code. */
final class SqliteErrors {

    // Primary result codes, https://www.sqlite.org/rescode.html
    static final int SQLITE_BUSY = 5;
    static final int SQLITE_LOCKED = 6;
    static final int SQLITE_READONLY = 8;
    static final int SQLITE_IOERR = 10;
    static final int SQLITE_CORRUPT = 11;
    static final int SQLITE_FULL = 13;
    static final int SQLITE_CANTOPEN = 14;
    static final int SQLITE_CONSTRAINT = 19;
    static final int SQLITE_NOTADB = 26;

    private SqliteErrors() {}

    /** The primary SQLite result code in {@code failure}'s cause chain, or -1 if there is none. */
    static int resultCode(Throwable failure) {
        SQLiteException sqlite = sqliteException(failure);
        return sqlite == null ? -1 : sqlite.getResultCode().code & 0xff;
    }

    private static SQLiteException sqliteException(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLiteException sqlite) {
                return sqlite;
            }
        }
        return null;
    }

    /**
     * The inbox exception for {@code failure}, which happened while {@code doing} (a phrase such as
     * "beginning the transaction").
     */
    static InboxException translate(Exception failure, String doing) {
        int code = resultCode(failure);
        String message = "SQLite failed " + doing + ": " + failure.getMessage();
        SQLiteException sqlite = sqliteException(failure);
        // Only a caller's deferred transaction meets this: the inbox's own begin with BEGIN IMMEDIATE.
        if (sqlite != null && sqlite.getResultCode() == SQLiteErrorCode.SQLITE_BUSY_SNAPSHOT) {
            return new InboxBusyException("your transaction read the database before another connection wrote to"
                    + " it, so SQLite cannot let it write (SQLITE_BUSY_SNAPSHOT) " + doing + "; nothing was applied."
                    + " Roll it back and retry it, and begin transactions that write with BEGIN IMMEDIATE"
                    + " (sqlite-jdbc: SQLiteConfig.setTransactionMode(IMMEDIATE)) so they take the write lock first",
                    failure);
        }
        // The inbox's own statements name only its tables (whatever their prefix); SQLite tells a
        // missing one by message only.
        if (sqlite != null && String.valueOf(sqlite.getMessage()).contains("no such table: ")) {
            return new InboxStorageException(Kind.SCHEMA_MISSING, "the inbox's tables are not in this database;"
                    + " the inbox creates them when it is built on the file. " + message, failure);
        }
        return switch (code) {
            case SQLITE_BUSY, SQLITE_LOCKED -> new InboxBusyException(
                    "the SQLite write lock was not obtained in time " + doing + "; nothing was applied", failure);
            case SQLITE_READONLY -> new InboxStorageException(Kind.READ_ONLY, message, failure);
            case SQLITE_FULL -> new InboxStorageException(Kind.DISK_FULL, message, failure);
            case SQLITE_CORRUPT, SQLITE_NOTADB -> new InboxStorageException(Kind.CORRUPT, message, failure);
            case SQLITE_CANTOPEN -> new InboxStorageException(Kind.UNAVAILABLE, message, failure);
            default -> new InboxStorageException(Kind.OTHER, message, failure);
        };
    }
}
