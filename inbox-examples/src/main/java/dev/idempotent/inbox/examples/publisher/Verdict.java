package dev.idempotent.inbox.examples.publisher;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * What one delivery attempt proved. Exactly one of {@link Acked}, {@link Rejected} or
 * {@link Uncertain}; only {@code Acked} lets the publisher write the completion mark.
 */
public sealed interface Verdict permits Verdict.Acked, Verdict.Rejected, Verdict.Uncertain {

    /** A short text for people, for example {@code ACKED (duplicate confirmed)}. */
    String describe();

    /**
     * A verified ACK: status 200, a JSON body for this id with {@code "accepted": true} and
     * {@code "protocol": 1}.
     *
     * @param applied what the receiver said: true when this request applied the business, false
     *     when it confirmed a duplicate
     */
    record Acked(boolean applied) implements Verdict {
        @Override
        public String describe() {
            return applied ? "ACKED (applied)" : "ACKED (duplicate confirmed)";
        }
    }

    /**
     * A definite refusal: the receiver understood the request and will refuse it again. Parked,
     * never resent.
     *
     * @param status the HTTP status
     * @param reason the status and the receiver's error code and message
     */
    record Rejected(int status, String reason) implements Verdict {
        public Rejected {
            Objects.requireNonNull(reason, "reason");
        }

        @Override
        public String describe() {
            return "REJECTED: " + reason;
        }
    }

    /**
     * Unknown whether the business is in place: no response, a 5xx, a 200 that failed
     * verification, or a refusal that is not the receiver's protocol v1 answer for this id (a
     * proxy's page, a {@code 401} unless asked to park it). The item stays pending and is sent
     * again.
     *
     * @param reason what went wrong
     * @param retryAfter how long the receiver asked us to wait, if it did
     */
    record Uncertain(String reason, Optional<Duration> retryAfter) implements Verdict {
        public Uncertain {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(retryAfter, "retryAfter");
        }

        static Uncertain of(String reason) {
            return new Uncertain(reason, Optional.empty());
        }

        @Override
        public String describe() {
            return "UNCERTAIN: " + reason;
        }
    }
}
