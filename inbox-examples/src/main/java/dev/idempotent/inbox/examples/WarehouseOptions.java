package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBuilder;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The inbox settings {@code serve} takes from its command line, the same for every database.
 * Immutable; {@link #defaults()} leaves every setting to the library.
 *
 * @param retention how long inbox rows are kept before a purge may delete them; empty for the
 *     library's default
 * @param senderMaxResendAge the age after which senders stop resending, when known; the inbox then
 *     refuses to start with a retention that does not cover it
 */
public record WarehouseOptions(Optional<Duration> retention, Optional<Duration> senderMaxResendAge) {

    public WarehouseOptions {
        Objects.requireNonNull(retention, "retention");
        Objects.requireNonNull(senderMaxResendAge, "senderMaxResendAge");
    }

    /** Every setting left to the library. */
    public static WarehouseOptions defaults() {
        return new WarehouseOptions(Optional.empty(), Optional.empty());
    }

    public WarehouseOptions withRetention(Duration retention) {
        return new WarehouseOptions(Optional.of(retention), senderMaxResendAge);
    }

    public WarehouseOptions withSenderMaxResendAge(Duration senderMaxResendAge) {
        return new WarehouseOptions(retention, Optional.of(senderMaxResendAge));
    }

    /** {@code builder} with these settings; the builder itself validates them. */
    public <I extends Inbox<?>> InboxBuilder<I> applyTo(InboxBuilder<I> builder) {
        InboxBuilder<I> result = builder;
        if (retention.isPresent()) {
            result = result.retention(retention.get());
        }
        if (senderMaxResendAge.isPresent()) {
            result = result.senderMaxResendAge(senderMaxResendAge.get());
        }
        return result;
    }
}
