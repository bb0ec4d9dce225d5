package dev.idempotent.inbox.examples.publisher;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers the outbox's pending items over HTTP and writes the completion mark only after a
 * verified ACK.
 *
 * <p>Items are first sent in enqueue order, by {@code window} workers, so that one slow item does
 * not hold up the rest. Each attempt is classified (see {@link Verdict}): acked items are marked,
 * rejected items are parked with their reason, and uncertain items wait with exponential backoff
 * and jitter and are sent again, until {@code maxAttempts} is reached and they are parked as
 * exhausted. Nothing is ever dropped: an item the publisher could not settle stays in the outbox.
 *
 * <p>Every attempt carries the item's origin time ({@link OutboxItem#origin()}). With a
 * {@linkplain PublisherSettings#maxResendAge() maximum resend age}, an item older than that by the
 * outbox's clock is not sent again but parked as exhausted: the receivers' retention is set to
 * cover exactly that age. With several receivers, each attempt goes where
 * {@link PublisherSettings} says.
 */
public final class Publisher {

    private static final Logger log = LoggerFactory.getLogger(Publisher.class);

    private final Outbox outbox;
    private final PublisherSettings settings;
    private final DeliveryListener listener;
    private final Backoff backoff;
    private final HttpClient client;
    private final Clock clock;

    /** A publisher for {@code outbox} that reports every attempt to {@code listener}. */
    public Publisher(Outbox outbox, PublisherSettings settings, DeliveryListener listener) {
        this.outbox = Objects.requireNonNull(outbox, "outbox");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.backoff = new Backoff(settings.initialBackoff(), settings.maxBackoff(), settings.jitterSeed());
        this.clock = outbox.clock();
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(settings.requestTimeout())
                .build();
    }

    /**
     * Delivers every pending item until each is acked, rejected or exhausted.
     *
     * @return what this run did
     * @throws InterruptedException if the calling thread is interrupted; items in flight stay
     *     pending and are sent again by the next run
     */
    public DeliveryReport deliverPending() throws InterruptedException {
        List<OutboxItem> pending = outbox.pending();
        Run run = new Run(pending.size());
        long start = System.nanoTime();
        for (OutboxItem item : pending) {
            // Equal start times leave the enqueue order to decide who goes first.
            run.queue.add(new Task(item, item.attempts(), start));
        }
        List<Thread> workers = new ArrayList<>();
        for (int i = 1; i <= Math.min(settings.window(), Math.max(pending.size(), 1)); i++) {
            Thread worker = new Thread(() -> work(run), "publisher-" + i);
            worker.setDaemon(true);
            workers.add(worker);
            worker.start();
        }
        try {
            run.remaining.await();
        } finally {
            for (Thread worker : workers) {
                worker.interrupt();
            }
        }
        return run.report();
    }

    private void work(Run run) {
        try {
            while (true) {
                Task task = run.queue.take();
                try {
                    attempt(run, task);
                } catch (RuntimeException e) {
                    // The outbox could not be written: the item stays pending for the next run.
                    log.error("item id={} could not be recorded: {}", task.item.id(), e.toString());
                    run.stillPending.incrementAndGet();
                    run.remaining.countDown();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void attempt(Run run, Task task) throws InterruptedException {
        OutboxItem item = task.item;
        if (tooOld(item)) {
            String reason = "exhausted: first enqueued at " + item.origin() + ", older than the max resend age "
                    + settings.maxResendAge().get() + "; not sent again";
            outbox.parkUnsent(item.id(), ItemState.EXHAUSTED, reason);
            run.exhausted.incrementAndGet();
            log.warn("item id={} exhausted: older than the max resend age", item.id());
            run.remaining.countDown();
            return;
        }
        int number = task.attemptsBefore + 1;
        run.attempts.incrementAndGet();
        if (task.isResend) {
            run.resends.incrementAndGet();
        }
        URI receiver = settings.receiverFor(item.seq(), number);
        Response response = send(item, receiver);
        Verdict verdict = response.verdict;
        ItemState state;
        if (verdict instanceof Verdict.Acked acked) {
            try {
                listener.onVerifiedAck(item.id(), acked.applied());
            } catch (RuntimeException e) {
                log.warn("delivery listener failed: {}", e.toString());
            }
            outbox.markAcked(item.id(), acked.applied());
            state = ItemState.ACKED;
            run.acked.incrementAndGet();
            if (!acked.applied()) {
                run.duplicates.incrementAndGet();
            }
        } else if (verdict instanceof Verdict.Rejected rejected) {
            outbox.park(item.id(), ItemState.REJECTED, rejected.reason());
            state = ItemState.REJECTED;
            run.rejected.incrementAndGet();
            // The receiver's definite answer (a conflict, a stale or invalid shipment): a normal
            // outcome, settled and listed for the operator, unlike an item that stays undelivered.
            log.info("item id={} rejected: HTTP {}", item.id(), rejected.status());
        } else if (number >= settings.maxAttempts()) {
            String reason = "exhausted after " + number + " attempts; last: " + ((Verdict.Uncertain) verdict).reason();
            outbox.park(item.id(), ItemState.EXHAUSTED, reason);
            state = ItemState.EXHAUSTED;
            run.exhausted.incrementAndGet();
            log.warn("item id={} exhausted after {} attempts", item.id(), number);
        } else {
            Verdict.Uncertain uncertain = (Verdict.Uncertain) verdict;
            outbox.recordUncertain(item.id(), uncertain.reason());
            state = ItemState.PENDING;
            Duration wait = backoff.after(number, uncertain.retryAfter());
            log.debug("item id={} attempt={} uncertain ({}); again in {} ms", item.id(), number, uncertain.reason(),
                    wait.toMillis());
            run.queue.add(new Task(item, number, System.nanoTime() + wait.toNanos(), true));
        }
        try {
            listener.onAttempt(new Attempt(item.id(), item.qty(), number, response.status, response.body, verdict, state,
                    receiver));
        } catch (RuntimeException e) {
            log.warn("delivery listener failed: {}", e.toString());
        }
        // Counted down after the listener, so that a run's last report precedes its return.
        if (state != ItemState.PENDING) {
            run.remaining.countDown();
        }
    }

    /** True when the item's origin time is further back than the maximum resend age allows. */
    private boolean tooOld(OutboxItem item) {
        return settings.maxResendAge()
                .map(age -> Duration.between(item.origin(), clock.instant()).compareTo(age) > 0)
                .orElse(false);
    }

    private Response send(OutboxItem item, URI receiver) throws InterruptedException {
        ObjectNode body = ProtocolV1.JSON.createObjectNode();
        body.put("id", item.id());
        body.put("qty", item.qty());
        // The first enqueue time, unchanged on every resend: the receiver judges staleness by it.
        body.put("origin", item.origin().toString());
        HttpRequest.Builder request = HttpRequest.newBuilder(PublisherSettings.receiptsUri(receiver))
                .timeout(settings.requestTimeout())
                .header("Content-Type", ProtocolV1.JSON_MEDIA_TYPE)
                .POST(HttpRequest.BodyPublishers.ofByteArray(json(body)));
        settings.token().ifPresent(token -> request.header("Authorization", "Bearer " + token));
        try {
            HttpResponse<byte[]> response = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Response(OptionalInt.of(response.statusCode()), AckVerifier.text(response.body()),
                    AckVerifier.classify(item.id(), response.statusCode(), response.body(),
                            response.headers().firstValue("Retry-After"), settings.onAuthFailure()));
        } catch (IOException e) {
            return new Response(OptionalInt.empty(), "", AckVerifier.classify(e));
        }
    }

    private static byte[] json(ObjectNode body) {
        try {
            return ProtocolV1.JSON.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private record Response(OptionalInt status, String body, Verdict verdict) {}

    /** An item waiting for its next attempt; ordered by when it may go, then by enqueue order. */
    private static final class Task implements Delayed {
        final OutboxItem item;
        final int attemptsBefore;
        final long notBefore;
        final boolean isResend;

        Task(OutboxItem item, int attemptsBefore, long notBefore) {
            this(item, attemptsBefore, notBefore, false);
        }

        Task(OutboxItem item, int attemptsBefore, long notBefore, boolean isResend) {
            this.item = item;
            this.attemptsBefore = attemptsBefore;
            this.notBefore = notBefore;
            this.isResend = isResend;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(notBefore - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            Task that = (Task) other;
            int byTime = Long.compare(notBefore, that.notBefore);
            return byTime != 0 ? byTime : Long.compare(item.seq(), that.item.seq());
        }
    }

    /** The state one delivery run shares between its workers. */
    private static final class Run {
        final DelayQueue<Task> queue = new DelayQueue<>();
        final CountDownLatch remaining;
        final int items;
        final AtomicInteger attempts = new AtomicInteger();
        final AtomicInteger resends = new AtomicInteger();
        final AtomicInteger acked = new AtomicInteger();
        final AtomicInteger duplicates = new AtomicInteger();
        final AtomicInteger rejected = new AtomicInteger();
        final AtomicInteger exhausted = new AtomicInteger();
        final AtomicInteger stillPending = new AtomicInteger();

        Run(int items) {
            this.items = items;
            this.remaining = new CountDownLatch(items);
        }

        DeliveryReport report() {
            return new DeliveryReport(items, acked.get(), duplicates.get(), rejected.get(), exhausted.get(),
                    attempts.get(), resends.get(), stillPending.get());
        }
    }
}
