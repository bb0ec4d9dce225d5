package dev.idempotent.inbox;

/**
 * The effect returned normally but left its transaction unable to commit what it did: it caught a
 * failed statement on a database that then aborts the whole transaction (PostgreSQL), or it
 * began, committed or rolled back the transaction it was given. The inbox's own transaction (or,
 * for a joined call, its savepoint) was rolled back and nothing was recorded, so a later delivery
 * of the same id is applied; with one exception, said in the message: an effect that committed
 * the transaction itself, on the raw connection, committed the claim along with its writes, so a
 * later delivery is a {@link Outcome.Duplicate}. The call is never reported as applied.
 *
 * <p>The cause, when the inbox saw it, is the statement failure the effect caught. An effect that
 * wants to survive a failing statement runs it inside a savepoint of its own.
 */
public final class EffectBrokeTransactionException extends InboxException {

    /**
     * For adapters and the engine.
     *
     * @param message what the effect did to the transaction
     * @param cause the statement failure the effect caught, or {@code null} if none was seen
     */
    public EffectBrokeTransactionException(String message, Throwable cause) {
        super(message, cause);
    }
}
