package dev.idempotent.inbox;

/**
 * The commit was sent but its result never came back (the connection was lost, the disk failed
 * mid-write): the message may or may not be applied. Do not acknowledge it. Delivering the same
 * message again is safe and tells the answer: {@link Outcome.Duplicate} if it did commit,
 * {@link Outcome.Applied} if it did not.
 */
public final class OutcomeUnknownException extends InboxException {

    /**
     * For adapters and the engine.
     *
     * @param message what was unknown
     * @param cause the failure that hid the commit's result
     */
    public OutcomeUnknownException(String message, Throwable cause) {
        super(message, cause);
    }
}
