package dev.idempotent.inbox;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;

/**
 * Keeps an inbox from growing without bound, without opening the hole that forgetting ids opens.
 *
 * <p>{@link #purge()} deletes rows received longer ago than the inbox's retention, in bounded
 * batches, each its own short transaction, so a purge never holds the write lock long enough to
 * make {@code apply} time out. Before deleting, each batch raises the inbox's persisted
 * <em>horizon</em>, the receive time before which rows may be gone. The horizon only moves
 * forward, even with several processes purging at once, and survives restarts.
 *
 * <p>A message that carries an origin time (see {@link Inbox#apply(String, Content, java.time.Instant,
 * Effect)}) and is new to the inbox is refused with {@link StaleMessageException} when an earlier
 * delivery of it could have been received before the horizon, that is when
 * {@code originTime < horizon + clockSkewMargin}. A message without an origin time cannot be
 * judged: if its earlier delivery was purged, it is applied again. Keep the retention longer than
 * any sender resends ({@link InboxBuilder#senderMaxResendAge}).
 */
public interface InboxRetention {

    /** Rows deleted per purge transaction: small enough that one batch is a short write. */
    int BATCH_SIZE = 1000;

    /**
     * Deletes the rows received before {@code now - retention}, in batches.
     *
     * @return what was deleted and the horizon afterwards
     * @throws InboxBusyException if a batch did not obtain the write lock in time; batches done
     *     before stay done, and the next purge continues
     * @throws InboxStorageException if the database failed
     */
    PurgeReport purge();

    /** {@return the horizon, the oldest row's age, and the counters}; reads committed data. */
    RetentionStatus status();

    /**
     * Runs {@link #purge()} every {@code period} on {@code executor}, starting after one period.
     * A failed purge is logged and tried again at the next period.
     *
     * @param executor runs the purges; it stays yours to shut down
     * @param period the time between two purges; positive
     * @return the schedule; cancel it to stop purging
     */
    ScheduledFuture<?> schedulePurge(ScheduledExecutorService executor, Duration period);
}
