package dev.idempotent.inbox;

import java.util.Objects;

/**
 * A stored result could not be written or read as the call's {@link ResultCodec} asked. When
 * writing ({@link Kind#TOO_LARGE}) the call's transaction, or its message's savepoint, was rolled
 * back: nothing was recorded, and a retry runs the effect again. When reading, on a duplicate or
 * a {@link ResultInbox#findResult find}, nothing was written. The message names the inbox, the id,
 * the type names and versions, never the result's bytes.
 */
@Beta
public final class StoredResultException extends InboxException {

    /** What was wrong with the result. */
    public enum Kind {
        /** The encoded result is larger than the inbox's {@link InboxSettings#maxResultBytes()}. */
        TOO_LARGE,
        /** The stored result has another codec's type name. */
        OTHER_TYPE,
        /** The stored result's version is one the codec does not {@linkplain ResultCodec#decodes decode}. */
        UNSUPPORTED_VERSION,
        /** The codec (or its seal) failed to read the stored bytes. */
        UNREADABLE
    }

    /** What was wrong with the result. */
    private final Kind kind;

    /**
     * For the engine.
     *
     * @param kind what was wrong; not {@code null}
     * @param message what failed, without the result's bytes
     * @param cause the codec's own failure, or {@code null}
     */
    public StoredResultException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    /** {@return what was wrong with the result} */
    public Kind kind() {
        return kind;
    }
}
