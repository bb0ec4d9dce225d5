package dev.idempotent.inbox;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The state of an inbox's retention, for metrics and operators.
 *
 * @param horizon the receive time before which rows may have been purged; empty if never purged
 * @param oldestRowAge the age of the oldest row still kept; empty if the inbox is empty
 * @param rowsPurged rows purged through this instance since it was built
 * @param staleRefusals messages refused as stale by this instance since it was built
 */
public record RetentionStatus(
        Optional<Instant> horizon, Optional<Duration> oldestRowAge, long rowsPurged, long staleRefusals) {

    /**
     * Checks that {@code horizon} and {@code oldestRowAge} are not {@code null}.
     *
     * @param horizon the receive time before which rows may have been purged; empty if never purged
     * @param oldestRowAge the age of the oldest row still kept; empty if the inbox is empty
     * @param rowsPurged rows purged through this instance since it was built
     * @param staleRefusals messages refused as stale by this instance since it was built
     * @throws NullPointerException if either is
     */
    public RetentionStatus {
        Objects.requireNonNull(horizon, "horizon");
        Objects.requireNonNull(oldestRowAge, "oldestRowAge");
    }
}
