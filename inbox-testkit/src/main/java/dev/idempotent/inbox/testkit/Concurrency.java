package dev.idempotent.inbox.testkit;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waiting for the threads of a concurrent property from inside a QuickTheories check, which throws nothing checked. */
final class Concurrency {

    /** A stuck thread fails the example rather than the whole build. */
    private static final long TIMEOUT_SECONDS = 120;

    private Concurrency() {}

    /**
     * The task's result; an assertion or exception from inside the task is rethrown as it was, so
     * that QuickTheories reports it as the cause.
     */
    static <T> T get(Future<T> future) {
        try {
            return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new AssertionError("a delivering thread failed", e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("a delivering thread did not finish within " + TIMEOUT_SECONDS + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for a delivering thread", e);
        }
    }
}
