package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fair single writer with group commit, for stores that admit one writer at a time (SQLite).
 *
 * <p>Callers queue their work in arrival order. Whichever caller finds the writer free becomes the
 * leader: it takes the oldest queued pieces of work (up to the group size), runs them in one
 * transaction, each inside its own savepoint so that a failing piece rolls back alone, commits
 * once, and hands every caller its own result. It leads until its own work is done, then wakes the
 * next waiting caller to take over. A lone caller runs its own work at once on its own thread,
 * without a savepoint; under load, one commit (one disk sync) serves many callers.
 *
 * <p>Work may therefore run on another caller's thread. No caller returns before the commit that
 * holds its work. A caller whose work was not taken within the busy timeout gives up with
 * {@link InboxBusyException}; work already taken is always waited for.
 */
public final class GroupCommit<H> implements TransactionRunner<H> {

    // Bounds a wait in case a wake-up is lost to a race; correctness never depends on it.
    private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final InboxStore<H> store;
    private final long busyTimeoutNanos;
    private final int maxGroupSize;
    private final long maxGroupWaitNanos;
    private final ConcurrentLinkedQueue<Request<H, ?>> queue = new ConcurrentLinkedQueue<>();
    private final ReentrantLock writer = new ReentrantLock();

    public GroupCommit(InboxStore<H> store, Duration busyTimeout, int maxGroupSize, Duration maxGroupWait) {
        this.store = store;
        this.busyTimeoutNanos = busyTimeout.toNanos();
        this.maxGroupSize = maxGroupSize;
        this.maxGroupWaitNanos = maxGroupWait.toNanos();
    }

    @Override
    public <T> T run(Work<H, T> work) throws Exception {
        if (writer.isHeldByCurrentThread()) {
            throw new InboxException("apply was called from inside an effect of the same inbox; it would have to"
                    + " wait for the transaction it runs in");
        }
        Request<H, T> request = new Request<>(work);
        queue.add(request);
        long deadline = System.nanoTime() + busyTimeoutNanos;
        while (!request.isDone()) {
            if (writer.tryLock()) {
                try {
                    while (!request.isDone()) {
                        runGroup();
                    }
                } finally {
                    writer.unlock();
                    wakeNextWaiter();
                }
            } else {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0 && request.cancel()) {
                    queue.remove(request);
                    throw new InboxBusyException("waited longer than the busy timeout of "
                            + Duration.ofNanos(busyTimeoutNanos) + " for the inbox's writer; nothing was applied", null);
                }
                LockSupport.parkNanos(this, remaining > 0 ? Math.min(remaining, MAX_PARK_NANOS) : MAX_PARK_NANOS);
            }
        }
        return request.resultOrThrow();
    }

    private void wakeNextWaiter() {
        for (Request<H, ?> waiting : queue) {
            if (waiting.isWaiting()) {
                LockSupport.unpark(waiting.caller);
                return;
            }
        }
    }

    private void runGroup() {
        List<Request<H, ?>> group = new ArrayList<>();
        take(group);
        if (maxGroupWaitNanos > 0 && group.size() < maxGroupSize) {
            long until = System.nanoTime() + maxGroupWaitNanos;
            while (group.size() < maxGroupSize && System.nanoTime() < until) {
                if (!take(group)) {
                    Thread.onSpinWait();
                }
            }
        }
        if (!group.isEmpty()) {
            execute(group);
        }
    }

    /** Moves queued requests into {@code group}, oldest first, up to the group size. */
    private boolean take(List<Request<H, ?>> group) {
        boolean took = false;
        Request<H, ?> next;
        while (group.size() < maxGroupSize && (next = queue.poll()) != null) {
            if (next.take()) {
                group.add(next);
                took = true;
            }
        }
        return took;
    }

    private void execute(List<Request<H, ?>> group) {
        StoreTransaction<H> tx;
        try {
            tx = store.begin();
        } catch (Throwable failure) {
            group.forEach(request -> request.fail(failure));
            finish(group);
            return;
        }
        // A lone request needs no savepoint: if it fails, the whole transaction is its own.
        boolean isolate = group.size() > 1;
        try {
            for (Request<H, ?> request : group) {
                if (isolate) {
                    tx.savepoint();
                }
                try {
                    request.runIn(tx);
                    if (isolate) {
                        tx.releaseSavepoint();
                    }
                } catch (Throwable failure) {
                    if (!isolate) {
                        throw failure;
                    }
                    request.fail(failure);
                    tx.rollbackToSavepoint();
                }
            }
            tx.commit();
        } catch (Throwable failure) {
            SerialTransactions.rollbackAfter(tx, failure);
            // Whatever the others computed was rolled back with the transaction: they fail with it.
            for (Request<H, ?> request : group) {
                request.failUnlessFailed(failure);
            }
        }
        finish(group);
    }

    private static void finish(List<? extends Request<?, ?>> group) {
        for (Request<?, ?> request : group) {
            request.done();
        }
    }

    /** One caller's work and, once done, its result or failure. */
    private static final class Request<H, T> {
        private static final int WAITING = 0;
        private static final int TAKEN = 1;
        private static final int DONE = 2;
        private static final int CANCELLED = 3;

        private final AtomicInteger state = new AtomicInteger(WAITING);
        private final Work<H, T> work;
        private final Thread caller = Thread.currentThread();
        // Written by the leader before done(); the atomic state publishes them to the caller.
        private T result;
        private Throwable failure;

        Request(Work<H, T> work) {
            this.work = work;
        }

        boolean isWaiting() {
            return state.get() == WAITING;
        }

        boolean isDone() {
            return state.get() == DONE;
        }

        boolean take() {
            return state.compareAndSet(WAITING, TAKEN);
        }

        boolean cancel() {
            return state.compareAndSet(WAITING, CANCELLED);
        }

        void runIn(StoreTransaction<H> tx) throws Exception {
            result = work.run(tx);
        }

        void fail(Throwable cause) {
            result = null;
            failure = cause;
        }

        void failUnlessFailed(Throwable cause) {
            if (failure == null) {
                fail(cause);
            }
        }

        void done() {
            state.set(DONE);
            LockSupport.unpark(caller);
        }

        T resultOrThrow() throws Exception {
            if (failure instanceof Exception exception) {
                throw exception;
            }
            if (failure instanceof Error error) {
                throw error;
            }
            if (failure != null) {
                throw new InboxException("the work failed", failure);
            }
            return result;
        }
    }
}
