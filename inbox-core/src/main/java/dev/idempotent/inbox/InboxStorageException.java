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
        /**
         * The inbox's tables, or the record of their schema version, are not where the connection
         * looks: the inbox was told not to create them ({@link SchemaMode#VALIDATE}), so run the
         * migration; or a joined transaction is on a database (or schema) the inbox was never set
         * up in.
         */
        SCHEMA_MISSING,
        /** The database cannot be reached or opened. */
        UNAVAILABLE,
        /** Anything else the database reported. */
        OTHER
    }

    /** What kind of failure it was. */
    private final Kind kind;

    /**
     * For adapters and the engine.
     *
     * @param kind what kind of failure it was; not {@code null}
     * @param message what failed
     * @param cause the database's error, or {@code null}
     */
    public InboxStorageException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    /** {@return what kind of failure it was} */
    public Kind kind() {
        return kind;
    }
}
