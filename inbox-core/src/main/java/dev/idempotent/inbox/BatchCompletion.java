package dev.idempotent.inbox;

import java.util.List;

/**
 * The last step of a batch given to {@link Inbox#applyAll(List, MessageEffect, BatchCompletion)}:
 * runs once, inside the batch's transaction, after every message was judged and before the commit,
 * with the results so far. It is for writes that must commit with the batch whatever its outcomes
 * were, such as a broker consumer's position: an effect runs only for messages new to the inbox, so
 * a batch of duplicates would otherwise write nothing.
 *
 * @param <H> the transaction handle
 * @param <R> what the batch's effect returns
 */
@FunctionalInterface
public interface BatchCompletion<H, R> {

    /**
     * Writes what completes the batch, through {@code tx}. An exception rolls back the whole batch:
     * nothing of it is applied, and {@code applyAll} throws that exception unchanged.
     *
     * @param tx the batch's transaction handle, outside any message's savepoint; never {@code null}
     * @param results one result per message, in order, as they will be returned if the commit
     *     succeeds
     */
    void complete(H tx, List<MessageResult<R>> results);
}
