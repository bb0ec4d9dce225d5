package dev.idempotent.inbox.examples;

/**
 * Where {@code consume} takes receipts from: one broker's consumer, applying them to the warehouse
 * through its inbox and counting what happened in {@link ConsumeCounters}.
 */
interface ReceiptSource extends AutoCloseable {

    /** Consumes on the calling thread until {@link #close()}. */
    void run();

    /** Stops {@link #run()} after the work in flight and releases the broker connection. */
    @Override
    void close();
}
