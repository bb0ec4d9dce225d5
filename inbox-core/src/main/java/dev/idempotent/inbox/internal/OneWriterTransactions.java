package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.spi.InboxStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One transaction per piece of work, on the calling thread, one at a time in arrival order: for
 * stores that admit one writer at a time (SQLite) when every caller must run its own work on its
 * own thread. The database's own busy handler would also serialise the callers, but polls with
 * sleeps and is not fair.
 */
final class OneWriterTransactions<H> implements TransactionRunner<H> {

    private final InboxStore<H> store;
    private final Duration busyTimeout;
    private final ReentrantLock writer = new ReentrantLock(true);
    private boolean closed; // guarded by writer

    OneWriterTransactions(InboxStore<H> store, Duration busyTimeout) {
        this.store = store;
        this.busyTimeout = busyTimeout;
    }

    @Override
    public <T> T run(Work<H, T> work) throws Exception {
        acquire();
        try {
            if (closed) {
                throw new InboxException("the inbox is closed");
            }
            return SerialTransactions.runIn(store, work);
        } finally {
            writer.unlock();
        }
    }

    /**
     * Waits up to the busy timeout for the writer, heeding no interrupt: the wait is bounded, and
     * an interrupt is kept on the thread for its caller to see.
     */
    private void acquire() {
        long deadline = System.nanoTime() + busyTimeout.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (writer.tryLock(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                        return;
                    }
                    throw new InboxBusyException("another call of this process held the inbox's writer for longer"
                            + " than the busy timeout of " + busyTimeout + "; nothing was applied", null);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        writer.lock();
        try {
            closed = true;
        } finally {
            writer.unlock();
        }
    }
}
