package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.spi.StoreTransaction;

/**
 * Runs work in a store's write transactions and returns only after the commit that holds it.
 *
 * @param <H> the transaction handle
 */
interface TransactionRunner<H> {

    /** Work done inside an open transaction. */
    @FunctionalInterface
    interface Work<H, T> {
        T run(StoreTransaction<H> tx) throws Exception;
    }

    /**
     * Runs {@code work} in a transaction and commits it. If the work throws, its writes are rolled
     * back and its exception is rethrown unchanged; if the commit fails, the commit's exception.
     */
    <T> T run(Work<H, T> work) throws Exception;

    /** {@return whether {@link #run} runs the work on the thread that calls it}, as all but group commit do */
    default boolean runsOnCallersThread() {
        return true;
    }

    /**
     * Waits for the transaction in progress, if the store admits one writer at a time, and makes
     * every later {@link #run} fail with an {@link dev.idempotent.inbox.InboxException}, so that
     * the store can be closed under no transaction.
     */
    void close();
}
