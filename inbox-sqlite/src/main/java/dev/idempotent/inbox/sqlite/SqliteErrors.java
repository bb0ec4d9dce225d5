package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxStorageException.Kind;
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
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLiteException sqlite) {
                return sqlite.getResultCode().code & 0xff;
            }
        }
        return -1;
    }

    /**
     * The inbox exception for {@code failure}, which happened while {@code doing} (a phrase such as
     * "beginning the transaction").
     */
    static InboxException translate(Exception failure, String doing) {
        int code = resultCode(failure);
        String message = "SQLite failed " + doing + ": " + failure.getMessage();
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
