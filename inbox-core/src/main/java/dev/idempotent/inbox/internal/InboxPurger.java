package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.InboxRetention;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.RetentionStatus;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one implementation of {@link InboxRetention}: each purge batch is a short transaction of
 * the inbox's own transaction runner, so it queues with the inbox's other writers, and raises the
 * horizon before it deletes.
 *
 * <p>A purge first raises the horizon in a transaction of its own and commits it, so that the
 * horizon is committed before any row goes. An apply whose claim finds the id's row deleted then
 * reads a horizon that was committed before the delete began. Raised only in the delete's own
 * transaction, it can be missed: InnoDB marks a committing transaction committed, which lets a
 * waiting claim pass, a moment before new snapshots stop counting it as running, so a claim that
 * met the delete can read the horizon from before it and apply a purged id again.
 */
final class InboxPurger implements InboxRetention {

    private static final Logger log = LoggerFactory.getLogger(InboxRetention.class);

    private final InboxEngine<?> engine;
    private final TransactionRunner<?> transactions;
    private final InboxStore<?> store;
    private final CallCounters counters;
    private final LongAdder rowsPurged = new LongAdder();

    InboxPurger(InboxEngine<?> engine, TransactionRunner<?> transactions, InboxStore<?> store, CallCounters counters) {
        this.engine = engine;
        this.transactions = transactions;
        this.store = store;
        this.counters = counters;
    }

    @Override
    public PurgeReport purge() {
        engine.checkCallable("purge");
        InboxSettings settings = engine.settings();
        // Receive times are stored to the millisecond, truncated; a finer cutoff would delete a row
        // received after it but stored as if before it, and that row's resend would apply again.
        Instant cutoff = Instant.ofEpochMilli(settings.clock().millis()).minus(settings.retention());
        run(tx -> {
            tx.raiseHorizon(settings.name(), cutoff);
            return null;
        });
        long purged = 0;
        int batches = 0;
        PurgePosition position = null;
        PurgeBatch batch;
        do {
            batch = purgeBatch(settings.name(), cutoff, position);
            position = batch.last().orElse(position);
            rowsPurged.add(batch.deleted());
            purged += batch.deleted();
            batches++;
        } while (batch.deleted() == InboxRetention.BATCH_SIZE);
        Instant horizon = store.horizon(settings.name()).orElse(cutoff);
        log.info("inbox={} purged rows={} batches={} horizon={}", settings.name(), purged, batches, horizon);
        PurgeReport report = new PurgeReport(purged, batches, horizon);
        try {
            settings.listener().onPurged(settings.name(), report);
        } catch (RuntimeException e) {
            log.warn("inbox={} listener failed on a purge", settings.name(), e);
        }
        return report;
    }

    private PurgeBatch purgeBatch(String inbox, Instant cutoff, PurgePosition after) {
        // Raised again in each batch, as the store contract has it: a store may serialise purgers
        // on the horizon's row, and raising it to the same cutoff changes nothing.
        return run(tx -> {
            tx.raiseHorizon(inbox, cutoff);
            return tx.deleteOldest(inbox, cutoff, after, InboxRetention.BATCH_SIZE);
        });
    }

    private <T> T run(Function<StoreTransaction<?>, T> work) {
        try {
            return transactions.run(work::apply);
        } catch (Exception e) {
            // The work above throws only the store's unchecked exceptions.
            throw Exceptions.unchecked(e);
        }
    }

    @Override
    public RetentionStatus status() {
        engine.checkOpen();
        InboxSettings settings = engine.settings();
        Instant now = settings.clock().instant();
        return new RetentionStatus(
                store.horizon(settings.name()),
                store.oldestReceivedAt(settings.name()).map(oldest -> Duration.between(oldest, now)),
                rowsPurged.sum(),
                counters.snapshot().stale());
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
