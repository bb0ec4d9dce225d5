package dev.idempotent.inbox.examples.http;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The receiver's threads. The JDK server hands each request to {@link #execute} as soon as its
 * first byte arrives, and the request's head and body are then read on that thread with blocking
 * reads. So that a client that sends slowly, or stops half-way, cannot hold the receiver:
 *
 * <ul>
 *   <li>requests are read and answered on up to {@code connections} threads, of which at most
 *       {@code threads} work in the warehouse at once ({@link #inWarehouse}); slow clients use up
 *       reading threads, never the warehouse's;
 *   <li>each request must arrive whole, head and body, within the read timeout. When it has not,
 *       its thread is interrupted, which closes the connection (the server reads from an
 *       interruptible channel) and ends the request without an answer. Once the request entered
 *       the warehouse it is never interrupted: a commit is not cut short, and its answer is
 *       written.
 * </ul>
 *
 * <p>The JDK server's own limits ({@code sun.net.httpserver.maxReqTime} and its kin) are not used:
 * they are system properties, read once by the first server created in the JVM, in whole seconds.
 */
final class RequestThreads implements Executor {

    private static final ThreadLocal<Deadline> CURRENT = new ThreadLocal<>();

    private final ThreadPoolExecutor pool;
    private final ScheduledThreadPoolExecutor timer;
    private final Semaphore warehouse;
    private final long readTimeoutNanos;

    RequestThreads(int connections, int threads, Duration readTimeout) {
        this.pool = new ThreadPoolExecutor(connections, connections, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                daemons("warehouse-http-"));
        this.timer = new ScheduledThreadPoolExecutor(1, daemons("warehouse-http-deadline-"));
        timer.setRemoveOnCancelPolicy(true);
        this.warehouse = new Semaphore(threads);
        this.readTimeoutNanos = readTimeout.toNanos();
    }

    @Override
    public void execute(Runnable exchange) {
        pool.execute(() -> run(exchange));
    }

    private void run(Runnable exchange) {
        Deadline deadline = new Deadline(Thread.currentThread());
        CURRENT.set(deadline);
        ScheduledFuture<?> cut = timer.schedule(deadline::cut, readTimeoutNanos, TimeUnit.NANOSECONDS);
        try {
            exchange.run();
        } finally {
            cut.cancel(false);
            deadline.finish();
            CURRENT.remove();
            // A cut delivered its interrupt before finish(); it must not reach the next request.
            Thread.interrupted();
        }
    }

    /**
     * True when the current request's read timeout has passed and its connection was closed: an
     * {@link IOException} while reading is then no fault of the request's framing.
     */
    static boolean readTimeoutPassed() {
        Deadline deadline = CURRENT.get();
        return deadline != null && deadline.wasCut();
    }

    /**
     * Runs {@code work} in the warehouse, on one of its {@code threads}, once the current request
     * has been read whole: it ends the request's read deadline, then waits for a warehouse thread.
     *
     * @throws IOException if the read timeout passed first (the connection is closed, nothing was
     *     done) or the wait was interrupted because the receiver is stopping
     */
    <T> T inWarehouse(Supplier<T> work) throws IOException {
        Deadline deadline = CURRENT.get();
        if (deadline != null && !deadline.stop()) {
            throw new IOException("the read timeout passed");
        }
        try {
            warehouse.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("stopping");
        }
        try {
            return work.get();
        } finally {
            warehouse.release();
        }
    }

    /** Stops taking requests and waits up to {@code timeout} for running ones; then interrupts them. */
    boolean shutdown(Duration timeout) throws InterruptedException {
        timer.shutdownNow();
        pool.shutdown();
        if (pool.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
            return true;
        }
        pool.shutdownNow();
        return false;
    }

    /** Interrupts the current request's thread at most once, and only while it is still reading. */
    private static final class Deadline {
        private enum State { READING, CUT, STOPPED }

        private final Thread thread;
        private State state = State.READING;

        Deadline(Thread thread) {
            this.thread = thread;
        }

        // Interrupting under the lock, and finish() taking it, keep the interrupt from landing
        // on the thread after it left this request.
        synchronized void cut() {
            if (state == State.READING) {
                state = State.CUT;
                thread.interrupt();
            }
        }

        synchronized boolean stop() {
            if (state == State.READING) {
                state = State.STOPPED;
            }
            return state == State.STOPPED;
        }

        synchronized boolean wasCut() {
            return state == State.CUT;
        }

        synchronized void finish() {
            state = State.STOPPED;
        }
    }

    private static ThreadFactory daemons(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
