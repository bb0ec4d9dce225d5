package dev.idempotent.inbox;

import java.time.Instant;
import java.util.Objects;

/**
 * The message is new to the inbox, but its origin time is older than what the inbox still
 * remembers: rows received before the {@linkplain #horizon() horizon} may have been purged, so the
 * inbox can no longer tell whether this is a resend of business it already applied. Nothing was
 * applied or written. This is a definite refusal for an operator to look at, never an
 * acknowledgement; resending will be refused again.
 */
public final class StaleMessageException extends InboxException {

    /** The business id. */
    private final String id;
    /** When the sender first created the business. */
    private final Instant originTime;
    /** The receive time before which rows may have been purged. */
    private final Instant horizon;

    /**
     * For the engine.
     *
     * @param id the business id; not {@code null}
     * @param originTime the message's origin time; not {@code null}
     * @param horizon the inbox's horizon when the message was refused; not {@code null}
     * @param message the refusal, naming the id and both times
     */
    public StaleMessageException(String id, Instant originTime, Instant horizon, String message) {
        super(message);
        this.id = Objects.requireNonNull(id, "id");
        this.originTime = Objects.requireNonNull(originTime, "originTime");
        this.horizon = Objects.requireNonNull(horizon, "horizon");
    }

    /** {@return the business id} */
    public String id() {
        return id;
    }

    /** {@return when the sender first created the business}, by the sender's clock. */
    public Instant originTime() {
        return originTime;
    }

    /** {@return the receive time before which the inbox's rows may have been purged} */
    public Instant horizon() {
        return horizon;
    }
}
