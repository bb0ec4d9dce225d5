package dev.idempotent.inbox.spi;

import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one purge batch deleted.
 *
 * @param deleted the number of rows deleted
 * @param last the position of the last row deleted; empty if none was
 */
public record PurgeBatch(int deleted, Optional<PurgePosition> last) {

    /**
     * @param deleted the number of rows deleted
     * @param last the position of the last row deleted; empty if none was
     */
    public PurgeBatch {
        Objects.requireNonNull(last, "last");
    }

    /**
     * {@return the batch that deleted the rows at {@code deleted}}
     *
     * @param deleted the positions of the deleted rows, in any order
     */
    public static PurgeBatch of(List<PurgePosition> deleted) {
        return new PurgeBatch(deleted.size(), deleted.stream().max(Comparator.naturalOrder()));
    }
}
