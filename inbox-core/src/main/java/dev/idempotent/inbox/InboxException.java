package dev.idempotent.inbox;

/**
 * The root of every exception the inbox throws itself. The effect's own exceptions are never
 * wrapped in it. No {@code InboxException} ever means that a message was applied.
 */
public class InboxException extends RuntimeException {

    public InboxException(String message) {
        super(message);
    }

    public InboxException(String message, Throwable cause) {
        super(message, cause);
    }
}
