package dev.idempotent.inbox;

import java.time.Instant;
import java.util.Objects;

/**
 * What one {@link InboxRetention#purge()} did.
 *
 * @param rowsPurged rows deleted by this purge
 * @param batches the short transactions it took
 * @param horizon the inbox's horizon afterwards: rows received before it may be gone
 */
public record PurgeReport(long rowsPurged, int batches, Instant horizon) {

    /**
     * Checks that {@code horizon} is not {@code null}.
     *
     * @param rowsPurged rows deleted by this purge
     * @param batches the short transactions it took
     * @param horizon the inbox's horizon afterwards: rows received before it may be gone
     * @throws NullPointerException if it is
     */
    public PurgeReport {
        Objects.requireNonNull(horizon, "horizon");
    }
}
