package dev.idempotent.inbox.spi;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What an adapter implements for {@link InboxPurger}: the storage side of retention.
 */
public interface RetentionStore {

    /**
     * A row's place in purge order, {@code (received_at, id)}: where one purge batch ended and the
     * next begins. Batches walk the index forward from it instead of from the start, which on
     * databases that keep deleted index entries until a vacuum (PostgreSQL) would make each batch
     * step over every row the earlier batches deleted.
     *
     * @param receivedAt the row's receive time
     * @param id the row's id
     */
    record PurgePosition(Instant receivedAt, String id) implements Comparable<PurgePosition> {

        private static final Comparator<PurgePosition> ORDER =
                Comparator.comparing(PurgePosition::receivedAt).thenComparing(PurgePosition::id);

        /**
         * Checks that neither component is {@code null}.
         *
         * @param receivedAt the row's receive time
         * @param id the row's id
         * @throws NullPointerException if one is
         */
        public PurgePosition {
            Objects.requireNonNull(receivedAt, "receivedAt");
            Objects.requireNonNull(id, "id");
        }

        /** Purge order: by receive time, then by id. */
        @Override
        public int compareTo(PurgePosition other) {
            return ORDER.compare(this, other);
        }
    }

    /**
     * What one batch did.
     *
     * @param deleted the number of rows deleted
     * @param last the position of the last row deleted; empty if none was
     */
    record PurgeBatch(int deleted, Optional<PurgePosition> last) {
        /**
         * Checks that {@code last} is not {@code null}.
         *
         * @param deleted the number of rows deleted
         * @param last the position of the last row deleted; empty if none was
         * @throws NullPointerException if it is
         */
        public PurgeBatch {
            Objects.requireNonNull(last, "last");
        }

        /**
         * The batch that deleted the rows at {@code deleted}, in any order.
         *
         * @param deleted the positions of the rows deleted
         * @return the batch, with the greatest of them as its last position
         */
        public static PurgeBatch of(List<PurgePosition> deleted) {
            return new PurgeBatch(deleted.size(), deleted.stream().max(Comparator.naturalOrder()));
        }
    }

    /**
     * In one short write transaction: raises the horizon of {@code inbox} to {@code cutoff} unless
     * it is already later (never lowers it), then deletes at most {@code limit} rows of
     * {@code inbox} received before {@code cutoff} and after {@code after} in
     * {@code (received_at, id)} order, oldest first. Raising the horizon first means a crash
     * between the two never leaves purged rows above the horizon.
     *
     * @param inbox the inbox's name
     * @param cutoff the new horizon; rows received before it are deleted
     * @param after where the previous batch of this purge ended; {@code null} for the first batch
     * @param limit the most rows to delete
     * @return what the batch deleted
     * @throws dev.idempotent.inbox.InboxBusyException if the write lock was not obtained in time
     */
    PurgeBatch purgeBatch(String inbox, Instant cutoff, PurgePosition after, int limit);

    /**
     * The committed horizon of {@code inbox}, if it was ever purged.
     *
     * @param inbox the inbox's name
     * @return the horizon, or empty
     */
    Optional<Instant> horizon(String inbox);

    /**
     * The receive time of the oldest row of {@code inbox}, if it has any.
     *
     * @param inbox the inbox's name
     * @return the oldest receive time, or empty
     */
    Optional<Instant> oldestReceivedAt(String inbox);
}
