package dev.idempotent.inbox.kafka;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** A {@link KafkaInboxConsumer} running on a thread of its own, and condition polling for tests. */
final class Running implements AutoCloseable {

    private final KafkaInboxConsumer<?> consumer;
    private final Thread thread;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private Running(KafkaInboxConsumer<?> consumer) {
        this.consumer = consumer;
        this.thread = new Thread(() -> {
            try {
                consumer.run();
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "kafka-inbox-consumer");
        thread.start();
    }

    static Running start(KafkaInboxConsumer<?> consumer) {
        return new Running(consumer);
    }

    /** What {@code run()} threw, if it ended by throwing. */
    Throwable failure() {
        return failure.get();
    }

    @Override
    public void close() throws InterruptedException {
        consumer.close();
        thread.join(30_000);
        if (thread.isAlive()) {
            throw new AssertionError("the consumer's thread did not end");
        }
    }

    /** Polls {@code condition} until it holds, failing after {@code timeout} with {@code state}. */
    static void await(Duration timeout, BooleanSupplier condition, Supplier<String> state) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not reached within " + timeout + ": " + state.get());
            }
            LockSupport.parkNanos(20_000_000L); // the polling interval; the condition decides
        }
    }
}
