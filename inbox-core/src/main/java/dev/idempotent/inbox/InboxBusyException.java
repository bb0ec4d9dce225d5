package dev.idempotent.inbox;

/**
 * The write lock was not obtained within the busy timeout, because another transaction held it.
 * The effect did not run and nothing was written: the message is <em>not</em> done and must not be
 * acknowledged. Retrying later is safe.
 */
public final class InboxBusyException extends InboxException {

    /**
     * For adapters and the engine.
     *
     * @param message what was waited for, and how long
     * @param cause the database's timeout error, or {@code null}
     */
    public InboxBusyException(String message, Throwable cause) {
        super(message, cause);
    }
}
