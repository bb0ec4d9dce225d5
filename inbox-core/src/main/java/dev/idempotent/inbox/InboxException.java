package dev.idempotent.inbox;

/**
 * The root of every exception the inbox throws itself. The effect's own exceptions are never
 * wrapped in it. No {@code InboxException} ever means that a message was applied.
 */
public class InboxException extends RuntimeException {

    /**
     * An exception without a cause.
     *
     * @param message what failed
     */
    public InboxException(String message) {
        super(message);
    }

    /**
     * An exception caused by another.
     *
     * @param message what failed
     * @param cause the underlying failure, or {@code null}
     */
    public InboxException(String message, Throwable cause) {
        super(message, cause);
    }
}
