package dev.idempotent.inbox;

import java.util.Objects;

/**
 * The database failed the inbox. Whatever the transaction had written was rolled back: the
 * message was not applied and must not be acknowledged.
 */
public final class InboxStorageException extends InboxException {

    /** What kind of failure it was, so operators and retry policies can tell them apart. */
    public enum Kind {
        /** The database refuses writes (a read-only file, mount or connection). */
        READ_ONLY,
        /** No space left for the write. */
        DISK_FULL,
        /** The file is not a database, or its content is damaged. */
        CORRUPT,
        /** The inbox schema was written by a newer version of this library. */
        NEWER_SCHEMA,
        /** The database cannot be reached or opened. */
        UNAVAILABLE,
        /** Anything else the database reported. */
        OTHER
    }

    private final Kind kind;

    public InboxStorageException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    /** What kind of failure it was. */
    public Kind kind() {
        return kind;
    }
}
