package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.InvalidMessageException.Problem;
import java.time.Duration;
import java.time.Instant;

/** The checks every id and content pass before a transaction begins. */
public final class MessageValidation {

    /** The longest id, in Unicode code points. */
    public static final int MAX_ID_LENGTH = 255;

    private MessageValidation() {}

    /**
     * Refuses a null, blank, over-long, control-character-holding or malformed id. Messages quote
     * no part of the id, since a refused id may be anything.
     */
    public static void checkId(String id) {
        if (id == null) {
            throw new InvalidMessageException(Problem.ID_MISSING, "id is missing");
        }
        if (id.isBlank()) {
            throw new InvalidMessageException(Problem.ID_BLANK, "id is blank");
        }
        int length = 0;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < id.length() && Character.isLowSurrogate(id.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new InvalidMessageException(Problem.ID_MALFORMED, "id holds an unpaired surrogate at index " + i);
            } else if (Character.isISOControl(c)) {
                throw new InvalidMessageException(
                        Problem.ID_CONTROL_CHARACTER, "id holds a control character at index " + i);
            }
            if (++length > MAX_ID_LENGTH) {
                throw new InvalidMessageException(
                        Problem.ID_TOO_LONG, "id is longer than " + MAX_ID_LENGTH + " characters");
            }
        }
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
