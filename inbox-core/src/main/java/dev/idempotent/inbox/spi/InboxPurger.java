package dev.idempotent.inbox.spi;

import dev.idempotent.inbox.InboxRetention;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.RetentionStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one implementation of {@link InboxRetention} over any {@link RetentionStore}. */
public final class InboxPurger implements InboxRetention {

    /** Rows per purge transaction: small enough that one batch is a short write. */
    public static final int BATCH_SIZE = 1000;

    private static final Logger log = LoggerFactory.getLogger(InboxRetention.class);

    private final InboxEngine<?> engine;
    private final RetentionStore store;
    private final LongAdder rowsPurged = new LongAdder();

    /**
     * @param engine the inbox whose settings (name, retention, clock) and counters apply
     * @param store the adapter's retention storage
     */
    public InboxPurger(InboxEngine<?> engine, RetentionStore store) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.store = Objects.requireNonNull(store, "store");
    }

    @Override
    public PurgeReport purge() {
        InboxSettings settings = engine.settings();
        // Receive times are stored to the millisecond, truncated; a finer cutoff would delete a row
        // received after it but stored as if before it, and that row's resend would apply again.
        Instant cutoff = Instant.ofEpochMilli(settings.clock().millis()).minus(settings.retention());
        long purged = 0;
        int batches = 0;
        RetentionStore.PurgePosition position = null;
        RetentionStore.PurgeBatch batch;
        do {
            batch = store.purgeBatch(settings.name(), cutoff, position, BATCH_SIZE);
            position = batch.last().orElse(position);
            rowsPurged.add(batch.deleted());
            purged += batch.deleted();
            batches++;
        } while (batch.deleted() == BATCH_SIZE);
        Instant horizon = store.horizon(settings.name()).orElse(cutoff);
        log.info("inbox={} purged rows={} batches={} horizon={}", settings.name(), purged, batches, horizon);
        return new PurgeReport(purged, batches, horizon);
    }

    @Override
    public RetentionStatus status() {
        InboxSettings settings = engine.settings();
        Instant now = settings.clock().instant();
        return new RetentionStatus(
                store.horizon(settings.name()),
                store.oldestReceivedAt(settings.name()).map(oldest -> Duration.between(oldest, now)),
                rowsPurged.sum(),
                engine.staleRefusals());
    }

    @Override
    public ScheduledFuture<?> schedulePurge(ScheduledExecutorService executor, Duration period) {
        Objects.requireNonNull(executor, "executor");
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive, was " + period);
        }
        return executor.scheduleWithFixedDelay(() -> {
            try {
                purge();
            } catch (RuntimeException e) {
                // The next period tries again; a scheduled task that threw would never run again.
                log.warn("inbox={} purge failed, retrying next period: {}", engine.name(), e.toString());
            }
        }, period.toNanos(), period.toNanos(), TimeUnit.NANOSECONDS);
    }
}
