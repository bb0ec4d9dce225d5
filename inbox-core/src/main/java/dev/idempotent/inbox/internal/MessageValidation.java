package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InvalidMessageException.Problem;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.MessageIds;
import java.time.Duration;
import java.time.Instant;

/** The checks every id and content pass before a transaction begins. */
public final class MessageValidation {

    private MessageValidation() {}

    /** Refuses what {@link MessageIds#check} refuses. */
    public static void checkId(String id) {
        MessageIds.check(id);
    }

    /** Refuses null content and content over {@code maxBytes}. */
    public static void checkContent(Content content, int maxBytes) {
        if (content == null) {
            throw new InvalidMessageException(Problem.CONTENT_MISSING, "content is missing");
        }
        if (content.size() > maxBytes) {
            throw new InvalidMessageException(
                    Problem.CONTENT_TOO_LARGE,
                    "content is " + content.size() + " bytes, more than the limit of " + maxBytes);
        }
    }

    /**
     * Refuses an origin time later than {@code now + skewMargin}. The stale check can only judge
     * origins against the horizon, which trails the clock by the retention: an origin in the
     * future would pass it even after the message's own row was purged, and its resend would be
     * applied again.
     */
    public static void checkOrigin(Instant originTime, Instant now, Duration skewMargin) {
        if (originTime.isAfter(now.plus(skewMargin))) {
            throw new InvalidMessageException(Problem.ORIGIN_IN_FUTURE, "origin time " + originTime
                    + " is later than the inbox's clock " + now + " plus the clock-skew margin " + skewMargin);
        }
    }
}
