package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.spi.StoreTransaction;

/**
 * One transaction per piece of work, on the calling thread, in parallel with other callers: for
 * stores whose writers run concurrently (PostgreSQL), where queueing them behind one another
 * would only cost.
 */
final class SerialTransactions<H> implements TransactionRunner<H> {

    private final InboxStore<H> store;
    private volatile boolean closed;

    SerialTransactions(InboxStore<H> store) {
        this.store = store;
    }

    @Override
    public <T> T run(Work<H, T> work) throws Exception {
        if (closed) {
            throw new InboxException("the inbox is closed");
        }
        return runIn(store, work);
    }

    /** Runs {@code work} in a new transaction of {@code store} and commits, or rolls back if anything failed. */
    static <H, T> T runIn(InboxStore<H> store, Work<H, T> work) throws Exception {
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

    /** Transactions already open finish; the store's connections belong to concurrent callers until they do. */
    @Override
    public void close() {
        closed = true;
    }
}
