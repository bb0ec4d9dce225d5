package dev.idempotent.inbox.micrometer;

import dev.idempotent.inbox.Beta;
import io.micrometer.observation.Observation;
import java.util.Objects;

/**
 * What an observation of one {@code apply} or {@code applyJoined} knows: the inbox, the message
 * id and, once the call ended, its outcome. Read by an {@link InboxObservationConvention}.
 */
@Beta
public final class InboxObservationContext extends Observation.Context {

    private final String inbox;
    private final String messageId;
    private volatile String outcome;

    /**
     * For {@link InboxObservations}.
     *
     * @param inbox the inbox's name; not {@code null}
     * @param messageId the business id as given; may be {@code null} (an invalid call)
     */
    InboxObservationContext(String inbox, String messageId) {
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.messageId = messageId;
    }

    /** {@return the inbox's name} */
    public String inbox() {
        return inbox;
    }

    /** {@return the business id as the caller gave it}; {@code null} if it gave none. */
    public String messageId() {
        return messageId;
    }

    /**
     * {@return how the call ended}: {@code applied}, {@code duplicate}, {@code conflict},
     * {@code stale}, {@code busy}, {@code unknown}, {@code invalid}, {@code failed} or, for a joined
     * call whose caller's transaction rolled back, {@code rolled_back}; {@code null} while it runs.
     */
    public String outcome() {
        return outcome;
    }

    void outcome(String outcome) {
        this.outcome = outcome;
    }
}
