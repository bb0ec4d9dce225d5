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
import java.util.function.IntConsumer;

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
 *
 * <p>An interrupt concerns only the caller whose thread was interrupted. If its work has not been
 * taken into a group yet, the work is withdrawn and the caller throws {@link InboxException} with
 * its interrupt flag still set; nothing was applied. Once the work is taken, the caller waits for
 * it without heeding the interrupt, returns its real result or failure, and has its flag set again
 * on return. A leader runs every group with its thread's flag cleared, so no effect, its own or
 * another caller's, and no store operation sees an interrupt that was pending before it started;
 * the flag is put back when the leader returns. An interrupt that reaches the leader's thread while
 * an effect runs can only be seen by that effect, whoever's it is: Java offers no way to steer it.
 * If that effect keeps the interrupt or throws {@link InterruptedException}, the leader keeps it too.
 */
final class GroupCommit<H> implements TransactionRunner<H> {

    // Bounds a wait in case a wake-up is lost to a race; correctness never depends on it.
    private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final InboxStore<H> store;
    private final long busyTimeoutNanos;
    private final int maxGroupSize;
    private final long maxGroupWaitNanos;
    private final ConcurrentLinkedQueue<Request<H, ?>> queue = new ConcurrentLinkedQueue<>();
    private final ReentrantLock writer = new ReentrantLock();
    private final IntConsumer committed;
    private volatile boolean closed; // set under writer

    /** Tells {@code committed} the size of each group after its commit; it must not throw. */
    GroupCommit(InboxStore<H> store, Duration busyTimeout, int maxGroupSize, Duration maxGroupWait,
            IntConsumer committed) {
        this.store = store;
        this.committed = committed;
        this.busyTimeoutNanos = busyTimeout.toNanos();
        this.maxGroupSize = maxGroupSize;
        this.maxGroupWaitNanos = maxGroupWait.toNanos();
    }

    /** A group's transaction runs on the thread of whichever caller leads it. */
    @Override
    public boolean runsOnCallersThread() {
        return false;
    }

    @Override
    public <T> T run(Work<H, T> work) throws Exception {
        Request<H, T> request = new Request<>(work);
        queue.add(request);
        long deadline = System.nanoTime() + busyTimeoutNanos;
        // Kept off the thread while it waits or leads: a set flag makes parkNanos return at once, and a
        // leader's flag must not reach the work it runs. Put back before returning, however it returns.
        boolean interrupted = false;
        try {
            while (!request.isDone()) {
                interrupted |= Thread.interrupted();
                if (interrupted && request.cancel()) {
                    queue.remove(request);
                    throw new InboxException("interrupted while waiting for the inbox's writer; nothing was applied");
                }
                if (writer.tryLock()) {
                    try {
                        // Once interrupted, a leader whose own work is still untaken steps down to withdraw it.
                        while (!request.isDone() && !(interrupted && request.isWaiting())) {
                            interrupted |= runGroup();
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
                                + Duration.ofNanos(busyTimeoutNanos) + " for the inbox's writer; nothing was applied",
                                null);
                    }
                    LockSupport.parkNanos(this, remaining > 0 ? Math.min(remaining, MAX_PARK_NANOS) : MAX_PARK_NANOS);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return request.resultOrThrow();
    }

    /** Waits for the group in progress; later groups fail their callers with "closed". */
    @Override
    public void close() {
        writer.lock();
        try {
            closed = true;
        } finally {
            writer.unlock();
        }
    }

    /** How many requests wait to be taken into a group; lets a test know that its callers have queued. */
    int queued() {
        int waiting = 0;
        for (Request<H, ?> request : queue) {
            if (request.isWaiting()) {
                waiting++;
            }
        }
        return waiting;
    }

    private void wakeNextWaiter() {
        for (Request<H, ?> waiting : queue) {
            // A leader that stepped down to withdraw its own work is still queued; wake the next one instead.
            if (waiting.isWaiting() && waiting.caller != Thread.currentThread()) {
                LockSupport.unpark(waiting.caller);
                return;
            }
        }
    }

    /** Runs the next group; returns whether this thread was interrupted meanwhile, its flag cleared. */
    private boolean runGroup() {
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
        boolean interrupted = Thread.interrupted();
        if (!group.isEmpty()) {
            interrupted |= execute(group);
        }
        return interrupted;
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

    /**
     * Runs {@code group} in one transaction, with this thread's interrupt flag cleared before the store
     * and before each piece of work. Returns whether the thread was interrupted meanwhile.
     */
    private boolean execute(List<Request<H, ?>> group) {
        boolean interrupted = false;
        StoreTransaction<H> tx;
        try {
            if (closed) {
                throw new InboxException("the inbox is closed");
            }
            tx = store.begin();
        } catch (Throwable failure) {
            group.forEach(request -> request.fail(failure));
            finish(group);
            return Thread.interrupted();
        }
        // A lone request needs no savepoint: if it fails, the whole transaction is its own.
        boolean isolate = group.size() > 1;
        boolean groupCommitted = false;
        try {
            for (Request<H, ?> request : group) {
                interrupted |= Thread.interrupted();
                if (isolate) {
                    tx.savepoint();
                }
                try {
                    try {
                        request.runIn(tx);
                    } finally {
                        // An interrupt that reached this work belongs to this thread's caller, not to the next work.
                        interrupted |= Thread.interrupted();
                    }
                    if (isolate) {
                        tx.releaseSavepoint();
                    }
                } catch (Throwable failure) {
                    // Work that threw this was interrupted on this thread, and the throw cleared the flag.
                    interrupted |= failure instanceof InterruptedException;
                    if (!isolate) {
                        throw failure;
                    }
                    request.fail(failure);
                    tx.rollbackToSavepoint();
                }
            }
            interrupted |= Thread.interrupted();
            tx.commit();
            groupCommitted = true;
        } catch (Throwable failure) {
            interrupted |= Thread.interrupted();
            SerialTransactions.rollbackAfter(tx, failure);
            // Whatever the others computed was rolled back with the transaction: they fail with it.
            for (Request<H, ?> request : group) {
                request.failUnlessFailed(failure);
            }
        }
        if (groupCommitted) {
            committed.accept(group.size());
        }
        finish(group);
        return interrupted | Thread.interrupted();
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
