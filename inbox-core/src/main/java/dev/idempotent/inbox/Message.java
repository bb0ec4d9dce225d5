package dev.idempotent.inbox;

import java.time.Instant;
import java.util.Objects;

/**
 * One message of a batch for {@link Inbox#applyAll}: what {@link Inbox#apply} takes as arguments.
 * The id and content are validated when the batch is applied, not here, so that one bad message
 * fails alone with an {@link InvalidMessageException}.
 *
 * @param id the business id
 * @param content what "the same business" means for this id
 * @param originTime when the sender created the business; {@code null} when unknown
 */
public record Message(String id, Content content, Instant originTime) {

    /**
     * A message without an origin time.
     *
     * @param id the business id
     * @param content what "the same business" means for this id
     * @return the message
     */
    public static Message of(String id, Content content) {
        return new Message(id, content, null);
    }

    /**
     * This message with an origin time.
     *
     * @param originTime when the sender created the business; not {@code null}
     * @return a copy with that origin time
     * @throws NullPointerException if {@code originTime} is {@code null}
     */
    public Message withOriginTime(Instant originTime) {
        return new Message(id, content, Objects.requireNonNull(originTime, "originTime"));
    }

    /** Names the id only: content never goes to logs. */
    @Override
    public String toString() {
        return "Message[" + id + "]";
    }
}
