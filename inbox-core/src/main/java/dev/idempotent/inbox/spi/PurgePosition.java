package dev.idempotent.inbox.spi;

import java.time.Instant;
import java.util.Comparator;
import java.util.Objects;

/**
 * A row's place in purge order, {@code (received_at, id)}: where one purge batch ended and the
 * next begins. Batches walk the index forward from it instead of from the start, which on
 * databases that keep deleted index entries until a vacuum (PostgreSQL) would make each batch step
 * over every row the earlier batches deleted.
 *
 * @param receivedAt the row's receive time
 * @param id the row's id
 */
public record PurgePosition(Instant receivedAt, String id) implements Comparable<PurgePosition> {

    private static final Comparator<PurgePosition> ORDER =
            Comparator.comparing(PurgePosition::receivedAt).thenComparing(PurgePosition::id);

    /**
     * @param receivedAt the row's receive time
     * @param id the row's id
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
