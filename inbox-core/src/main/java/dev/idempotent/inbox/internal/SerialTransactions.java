package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.spi.StoreTransaction;

/**
 * One transaction per piece of work, on the calling thread: for stores whose writers run in
 * parallel (PostgreSQL), where queueing them behind one another would only cost.
 */
public final class SerialTransactions<H> implements TransactionRunner<H> {

    private final InboxStore<H> store;

    public SerialTransactions(InboxStore<H> store) {
        this.store = store;
    }

    @Override
    public <T> T run(Work<H, T> work) throws Exception {
        StoreTransaction<H> tx = store.begin();
        try {
            T result = work.run(tx);
            tx.commit();
            return result;
        } catch (Throwable failure) {
            rollbackAfter(tx, failure);
            throw failure;
        }
    }

    static void rollbackAfter(StoreTransaction<?> tx, Throwable failure) {
        try {
            tx.rollback();
        } catch (RuntimeException | Error rollbackFailure) {
            failure.addSuppressed(rollbackFailure);
        }
    }
}
