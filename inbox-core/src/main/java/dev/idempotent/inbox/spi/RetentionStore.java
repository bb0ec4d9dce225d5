package dev.idempotent.inbox.spi;

import java.time.Instant;
import java.util.Optional;

/**
 * What an adapter implements for {@link InboxPurger}: the storage side of retention.
 */
public interface RetentionStore {

    /**
     * In one short write transaction: raises the horizon of {@code inbox} to {@code cutoff} unless
     * it is already later (never lowers it), then deletes at most {@code limit} rows of
     * {@code inbox} received before {@code cutoff}. Raising the horizon first means a crash
     * between the two never leaves purged rows above the horizon.
     *
     * @return the number of rows deleted
     * @throws dev.idempotent.inbox.InboxBusyException if the write lock was not obtained in time
     */
    int purgeBatch(String inbox, Instant cutoff, int limit);

    /** The committed horizon of {@code inbox}, if it was ever purged. */
    Optional<Instant> horizon(String inbox);

    /** The receive time of the oldest row of {@code inbox}, if it has any. */
    Optional<Instant> oldestReceivedAt(String inbox);
}
