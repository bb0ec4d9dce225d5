package dev.idempotent.inbox.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Consumer;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer's one thread: takes deliveries in the order the broker sent them, applies them a
 * batch at a time, and only then settles them on the channel. It is the only thread that acks,
 * nacks or rejects, and it also cancels and closes the channel at the end, because a channel is
 * not safe for concurrent use.
 *
 * <p>Deliveries are tagged with the channel generation they arrived on. When the channel (or its
 * connection) is lost, the broker takes back everything unacked on it and will deliver it again;
 * so deliveries of an earlier generation are dropped unapplied, and a batch whose channel was lost
 * while it ran is not settled at all: its committed deliveries come back as duplicates and are
 * acked then.
 *
 * <p>It stops of its own accord, and then tells the {@link ConsumerStopListener} after its channel
 * is closed, for: an {@link Error} from an effect or the decoder; a cancel from the broker after
 * which the queue did not come back within the resubscribe window; and a channel the broker closed
 * with a channel error, which the client does not recover.
 */
final class DeliveryWorker implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(RabbitInboxConsumer.class);

    /** How often an idle worker looks whether it is asked to stop. */
    private static final long IDLE_POLL_MILLIS = 100;
    /** How often a cancelled worker looks whether its queue is back. */
    private static final long RESUBSCRIBE_POLL_MILLIS = 200;

    private record Pending(Delivery delivery, long generation) {
        long tag() {
            return delivery.getEnvelope().getDeliveryTag();
        }
    }

    private final Channel channel;
    private final String queue;
    private final BatchApplier<?, ?> applier;
    private final int batchSize;
    private final Duration batchLinger;
    private final Duration retryBackoff;
    private final Duration resubscribeWithin;
    private final ConsumerStopListener stopListener;
    private final BlockingQueue<Pending> arrived = new LinkedBlockingQueue<>();
    private final AtomicLong generation = new AtomicLong();
    private final CountDownLatch stopRequested = new CountDownLatch(1);
    private volatile String consumerTag;
    private volatile Consumer brokerConsumer;
    private volatile boolean cancelledByBroker;
    private volatile ShutdownSignalException closedByBroker;
    private volatile boolean stopped;
    private volatile RabbitInboxConsumer owner;
    private Throwable stopCause;
    final LongAdder acked = new LongAdder();
    final LongAdder deadLettered = new LongAdder();
    final LongAdder requeued = new LongAdder();

    DeliveryWorker(Channel channel, String queue, BatchApplier<?, ?> applier, int batchSize, Duration batchLinger,
            Duration retryBackoff, Duration resubscribeWithin, ConsumerStopListener stopListener) {
        this.channel = channel;
        this.queue = queue;
        this.applier = applier;
        this.batchSize = batchSize;
        this.batchLinger = batchLinger;
        this.retryBackoff = retryBackoff;
        this.resubscribeWithin = resubscribeWithin;
        this.stopListener = stopListener;
    }

    /** On the connection's dispatch thread: the broker cancelled the subscription (basic.cancel). */
    void cancelled() {
        cancelledByBroker = true;
    }

    /** {@return whether the worker has stopped, or is stopping} */
    boolean stopped() {
        return stopped;
    }

    /** On the connection's dispatch thread: a delivery arrived. */
    void delivered(Delivery delivery) {
        arrived.add(new Pending(delivery, generation.get()));
    }

    /** On the connection's dispatch thread: the channel is gone, and with it every unacked delivery. */
    void channelLost(ShutdownSignalException signal) {
        generation.incrementAndGet();
        if (!signal.isHardError() && !signal.isInitiatedByApplication()) {
            // The broker closed this channel alone (a delivery unacked past its consumer_timeout,
            // say). The client recovers lost connections, not channels closed this way.
            closedByBroker = signal;
        }
        if (stopRequested.getCount() > 0) {
            log.info("channel lost ({}); its unacked deliveries return to the queue", signal.getMessage());
        }
    }

    void consuming(String consumerTag, Consumer brokerConsumer, RabbitInboxConsumer owner) {
        this.consumerTag = consumerTag;
        this.brokerConsumer = brokerConsumer;
        this.owner = owner;
    }

    void requestStop() {
        stopRequested.countDown();
    }

    @Override
    public void run() {
        try {
            while (stopRequested.getCount() > 0) {
                ShutdownSignalException closed = closedByBroker;
                if (closed != null) {
                    log.error("the broker closed the channel of the consumer of queue {} ({}); the consumer stops", queue,
                            closed.getMessage());
                    stopOwnAccord(closed);
                    break;
                }
                // Deliveries taken before the cancel are still the channel's to settle: first them.
                if (cancelledByBroker && arrived.isEmpty()) {
                    resubscribe();
                    continue;
                }
                List<Pending> batch = nextBatch();
                if (!batch.isEmpty()) {
                    process(batch);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            // A defect of this class; the consumer must not look alive without its thread.
            log.error("the consumer of queue {} failed and stops", queue, e);
            stopCause = e;
        } finally {
            stopped = true;
            stopConsuming();
            if (stopCause != null) {
                tellStopped(stopCause);
            }
        }
    }

    private void stopOwnAccord(Throwable cause) {
        stopCause = cause;
        stopRequested.countDown();
    }

    private void tellStopped(Throwable cause) {
        try {
            stopListener.stopped(owner, cause);
        } catch (RuntimeException e) {
            log.warn("the stop listener of the consumer of queue {} threw", queue, e);
        }
    }

    /**
     * After the broker cancelled the subscription (the queue was deleted, or a mirrored queue failed
     * over): consumes again on the same channel once the queue exists, looking every 200 ms; if it
     * does not within the resubscribe window, stops of its own accord.
     */
    private void resubscribe() throws InterruptedException {
        log.warn("the broker cancelled the consumer of queue {} (the queue was deleted or moved); consuming again"
                + " if it is back within {}", queue, resubscribeWithin);
        long deadline = System.nanoTime() + resubscribeWithin.toNanos();
        while (stopRequested.getCount() > 0) {
            if (queueExists()) {
                // Cleared first, so that a cancel of the new subscription is not lost.
                cancelledByBroker = false;
                try {
                    // Under the cancelled subscription's tag: the connection's recovery records
                    // subscriptions by tag, and would otherwise restore the cancelled one as well.
                    channel.basicConsume(queue, false, consumerTag, brokerConsumer);
                    log.info("consuming queue {} again", queue);
                } catch (IOException | ShutdownSignalException e) {
                    // Gone again between the look and the consume: the broker closed the channel.
                    stopOwnAccord(new java.io.IOException("the broker cancelled the consumer of queue " + queue
                            + " and consuming it again failed", e));
                }
                return;
            }
            if (System.nanoTime() - deadline >= 0) {
                stopOwnAccord(new java.io.IOException("the broker cancelled the consumer of queue " + queue
                        + " (the queue was deleted or moved) and the queue did not come back within "
                        + resubscribeWithin));
                return;
            }
            stopRequested.await(RESUBSCRIBE_POLL_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Asks on a channel of its own, as a passive declare of a missing queue closes its channel. */
    private boolean queueExists() {
        Channel probe = null;
        try {
            probe = channel.getConnection().createChannel();
            if (probe == null) {
                return false;
            }
            probe.queueDeclarePassive(queue);
            return true;
        } catch (IOException | ShutdownSignalException e) {
            return false;
        } finally {
            if (probe != null && probe.isOpen()) {
                try {
                    probe.close();
                } catch (IOException | java.util.concurrent.TimeoutException | ShutdownSignalException e) {
                    log.debug("closing the probe channel failed: {}", e.toString());
                }
            }
        }
    }

    private List<Pending> nextBatch() throws InterruptedException {
        List<Pending> batch = new ArrayList<>(batchSize);
        Pending first = arrived.poll(IDLE_POLL_MILLIS, TimeUnit.MILLISECONDS);
        if (first == null) {
            return batch;
        }
        add(batch, first);
        long deadline = System.nanoTime() + batchLinger.toNanos();
        while (batch.size() < batchSize) {
            Pending next = arrived.poll();
            if (next == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || (next = arrived.poll(left, TimeUnit.NANOSECONDS)) == null) {
                    break;
                }
            }
            add(batch, next);
        }
        return batch;
    }

    private void add(List<Pending> batch, Pending pending) {
        long current = generation.get();
        if (pending.generation() != current) {
            // From a channel that is gone: the broker delivers it again on the new one.
            return;
        }
        if (!batch.isEmpty() && batch.get(0).generation() != current) {
            batch.clear();
        }
        batch.add(pending);
    }

    private void process(List<Pending> batch) throws InterruptedException {
        long batchGeneration = batch.get(0).generation();
        List<Delivery> deliveries = new ArrayList<>(batch.size());
        for (Pending pending : batch) {
            deliveries.add(pending.delivery());
        }
        List<Verdict> verdicts;
        try {
            verdicts = applier.apply(deliveries, () -> stopRequested.getCount() == 0);
        } catch (RuntimeException e) {
            // A defect (a decoder answering null, say): nothing is known to be committed.
            log.error("applying a batch of {} deliveries failed; requeued after the backoff", batch.size(), e);
            verdicts = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                verdicts.add(Verdict.REQUEUE);
            }
        }
        Error fatal = applier.fatal();
        if (fatal != null) {
            // Asked before settling, so that the requeues of the rest do not wait out the backoff.
            stopOwnAccord(fatal);
        }
        try {
            settle(batch, verdicts, batchGeneration);
        } catch (IOException | ShutdownSignalException e) {
            log.info("the channel failed while settling ({}); its unsettled deliveries return to the queue",
                    e.getMessage());
        }
    }

    private void settle(List<Pending> batch, List<Verdict> verdicts, long batchGeneration)
            throws IOException, InterruptedException {
        if (generation.get() != batchGeneration) {
            log.info("channel lost while a batch of {} was applied; left to redelivery, where committed ones are"
                    + " duplicates", batch.size());
            return;
        }
        List<Long> acks = new ArrayList<>();
        List<Long> requeues = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            long tag = batch.get(i).tag();
            switch (verdicts.get(i)) {
                case ACK -> acks.add(tag);
                case REQUEUE -> requeues.add(tag);
                case DEAD_LETTER -> {
                    channel.basicReject(tag, false);
                    deadLettered.increment();
                }
            }
        }
        if (!acks.isEmpty()) {
            long highest = acks.get(acks.size() - 1);
            boolean requeueBelow = !requeues.isEmpty() && requeues.get(0) < highest;
            if (acks.size() > 1 && !requeueBelow) {
                // Everything unsettled up to the highest tag is this batch's committed deliveries.
                channel.basicAck(highest, true);
            } else {
                for (long tag : acks) {
                    channel.basicAck(tag, false);
                }
            }
            acked.add(acks.size());
        }
        if (!requeues.isEmpty()) {
            // A stop does not wait out the backoff: closing the channel would requeue them anyway.
            stopRequested.await(retryBackoff.toNanos(), TimeUnit.NANOSECONDS);
            if (generation.get() != batchGeneration) {
                return;
            }
            if (requeues.size() == batch.size() && requeues.size() > 1) {
                channel.basicNack(requeues.get(requeues.size() - 1), true, true);
            } else {
                for (long tag : requeues) {
                    channel.basicNack(tag, false, true);
                }
            }
            requeued.add(requeues.size());
        }
    }

    private void stopConsuming() {
        String tag = consumerTag;
        try {
            if (tag != null && channel.isOpen()) {
                channel.basicCancel(tag);
            }
        } catch (IOException | ShutdownSignalException e) {
            log.debug("cancelling the consumer failed: {}", e.toString());
        }
        try {
            if (channel.isOpen()) {
                // Deliveries taken but not applied are unacked; closing returns them to the queue.
                channel.close();
            }
        } catch (IOException | ShutdownSignalException | java.util.concurrent.TimeoutException e) {
            log.debug("closing the channel failed: {}", e.toString());
        }
    }
}
