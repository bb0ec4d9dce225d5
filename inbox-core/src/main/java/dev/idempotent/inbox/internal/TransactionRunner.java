package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.spi.StoreTransaction;

/**
 * Runs work in a store's write transactions and returns only after the commit that holds it.
 *
 * @param <H> the transaction handle
 */
public interface TransactionRunner<H> {

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
}
