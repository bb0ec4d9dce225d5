package dev.idempotent.inbox;

/**
 * The business change {@link Inbox#applyAll} applies once per message of a batch; like
 * {@link Effect}, with the message it is applied for.
 *
 * @param <H> the transaction handle
 * @param <R> what the effect returns, carried by {@link Outcome.Applied}
 * @param <X> the checked exception the effect may throw
 */
@FunctionalInterface
public interface MessageEffect<H, R, X extends Exception> {

    /**
     * Applies the business change of {@code message} inside the batch's transaction.
     *
     * @param tx the batch's transaction handle, inside this message's savepoint
     * @param message the message being applied
     * @return the result, carried by {@link Outcome.Applied}; may be {@code null}
     * @throws X rolls back this message alone; reported in its {@link MessageResult}
     */
    R apply(H tx, Message message) throws X;
}
