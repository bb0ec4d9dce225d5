package dev.idempotent.inbox.examples.publisher;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How the publisher delivers. Immutable; {@link #to(URI)} gives the defaults and each
 * {@code with} method a validated copy.
 *
 * @param receiver the receiver's base address, for example {@code http://127.0.0.1:50123}
 * @param token the bearer token to send, if the receiver wants one
 * @param maxAttempts attempts per item before it is parked as exhausted
 * @param initialBackoff the wait after the first uncertain attempt
 * @param maxBackoff the longest wait between two attempts
 * @param window how many requests may be in flight at once
 * @param requestTimeout how long to wait for a response before the attempt is uncertain
 * @param jitterSeed seeds the backoff jitter, so that a run can be repeated
 */
public record PublisherSettings(
        URI receiver,
        Optional<String> token,
        int maxAttempts,
        Duration initialBackoff,
        Duration maxBackoff,
        int window,
        Duration requestTimeout,
        long jitterSeed) {

    public PublisherSettings {
        Objects.requireNonNull(receiver, "receiver");
        if (!"http".equalsIgnoreCase(receiver.getScheme()) && !"https".equalsIgnoreCase(receiver.getScheme())) {
            throw new IllegalArgumentException("receiver must be an http:// or https:// address, was " + receiver);
        }
        Objects.requireNonNull(token, "token");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        }
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("backoff must satisfy 0 <= initialBackoff <= maxBackoff, was "
                    + initialBackoff + " and " + maxBackoff);
        }
        if (window < 1) {
            throw new IllegalArgumentException("window must be at least 1, was " + window);
        }
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        if (requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("requestTimeout must be positive, was " + requestTimeout);
        }
    }

    /**
     * Defaults for delivering to {@code receiver}: no token, 8 attempts, backoff from 100 ms to
     * 5 s, 8 requests in flight, 10 s request timeout.
     */
    public static PublisherSettings to(URI receiver) {
        return new PublisherSettings(receiver, Optional.empty(), 8, Duration.ofMillis(100), Duration.ofSeconds(5), 8,
                Duration.ofSeconds(10), System.nanoTime());
    }

    /** Where shipments are posted: the receiver's {@code /receipts}. */
    public URI receiptsUri() {
        String base = receiver.toString();
        if (base.endsWith("/receipts")) {
            return receiver;
        }
        return URI.create(base.endsWith("/") ? base + "receipts" : base + "/receipts");
    }

    public PublisherSettings withToken(String token) {
        return new PublisherSettings(receiver, Optional.of(token), maxAttempts, initialBackoff, maxBackoff, window,
                requestTimeout, jitterSeed);
    }

    public PublisherSettings withMaxAttempts(int maxAttempts) {
        return new PublisherSettings(receiver, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed);
    }

    public PublisherSettings withBackoff(Duration initialBackoff, Duration maxBackoff) {
        return new PublisherSettings(receiver, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed);
    }

    public PublisherSettings withWindow(int window) {
        return new PublisherSettings(receiver, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed);
    }

    public PublisherSettings withRequestTimeout(Duration requestTimeout) {
        return new PublisherSettings(receiver, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed);
    }

    public PublisherSettings withJitterSeed(long jitterSeed) {
        return new PublisherSettings(receiver, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed);
    }
}
