package dev.idempotent.inbox.examples.publisher;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * How the publisher delivers. Immutable; {@link #to(URI)} and {@link #to(List)} give the defaults
 * and each {@code with} method a validated copy.
 *
 * <p>With several receivers (instances of one warehouse that share a database), the item enqueued
 * {@code s}-th is first sent to receiver {@code s mod n}, and each uncertain attempt moves it on to
 * the next receiver in the list, so that an item whose receiver died is delivered by another. An
 * ACK from any of them settles it: they share one inbox.
 *
 * @param receivers the receivers' base addresses, for example {@code http://127.0.0.1:50123}; at
 *     least one
 * @param token the bearer token to send, if the receivers want one
 * @param maxAttempts attempts per item before it is parked as exhausted
 * @param initialBackoff the wait after the first uncertain attempt
 * @param maxBackoff the longest wait between two attempts
 * @param window how many requests may be in flight at once
 * @param requestTimeout how long to wait for a response before the attempt is uncertain
 * @param jitterSeed seeds the backoff jitter, so that a run can be repeated
 * @param maxResendAge the age of an item (since its origin time) after which it is no longer sent
 *     but parked as exhausted; empty for no limit. The receivers' retention must cover it.
 * @param onAuthFailure what a {@code 401} does to an item: by default it is uncertain and resent,
 *     since a corrected token would deliver it
 */
public record PublisherSettings(
        List<URI> receivers,
        Optional<String> token,
        int maxAttempts,
        Duration initialBackoff,
        Duration maxBackoff,
        int window,
        Duration requestTimeout,
        long jitterSeed,
        Optional<Duration> maxResendAge,
        AuthFailure onAuthFailure) {

    /** What the publisher does with an item whose request was answered {@code 401}. */
    public enum AuthFailure {
        /** Uncertain: resent with backoff, like any answer that proves nothing. The default. */
        RESEND,
        /** Parked as rejected, with the reason "token refused", never sent again. */
        PARK
    }

    public PublisherSettings {
        Objects.requireNonNull(receivers, "receivers");
        receivers = List.copyOf(receivers);
        if (receivers.isEmpty()) {
            throw new IllegalArgumentException("receivers must name at least one receiver");
        }
        for (URI receiver : receivers) {
            if (!"http".equalsIgnoreCase(receiver.getScheme()) && !"https".equalsIgnoreCase(receiver.getScheme())) {
                throw new IllegalArgumentException("receiver must be an http:// or https:// address, was " + receiver);
            }
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
        Objects.requireNonNull(maxResendAge, "maxResendAge");
        maxResendAge.ifPresent(age -> {
            if (age.isNegative() || age.isZero()) {
                throw new IllegalArgumentException("maxResendAge must be positive, was " + age);
            }
        });
        Objects.requireNonNull(onAuthFailure, "onAuthFailure");
    }

    /**
     * Defaults for delivering to {@code receiver}: no token, 8 attempts, backoff from 100 ms to
     * 5 s, 8 requests in flight, 10 s request timeout, no maximum resend age, a {@code 401}
     * resent.
     */
    public static PublisherSettings to(URI receiver) {
        return to(List.of(receiver));
    }

    /** The defaults of {@link #to(URI)}, for several instances of one warehouse. */
    public static PublisherSettings to(List<URI> receivers) {
        return new PublisherSettings(receivers, Optional.empty(), 8, Duration.ofMillis(100), Duration.ofSeconds(5), 8,
                Duration.ofSeconds(10), System.nanoTime(), Optional.empty(), AuthFailure.RESEND);
    }

    /** The first receiver's base address. */
    public URI receiver() {
        return receivers.get(0);
    }

    /** Where the first receiver takes shipments: its {@code /receipts}. */
    public URI receiptsUri() {
        return receiptsUri(receiver());
    }

    /**
     * The receiver for attempt {@code attempt} (from 1) of the item enqueued {@code seq}-th: the
     * routing rule described on this class.
     */
    URI receiverFor(long seq, int attempt) {
        int n = receivers.size();
        return receivers.get((int) Math.floorMod(seq + attempt - 1, (long) n));
    }

    /** {@code receiver}'s {@code /receipts}. */
    static URI receiptsUri(URI receiver) {
        String base = receiver.toString();
        if (base.endsWith("/receipts")) {
            return receiver;
        }
        return URI.create(base.endsWith("/") ? base + "receipts" : base + "/receipts");
    }

    public PublisherSettings withToken(String token) {
        return new PublisherSettings(receivers, Optional.of(token), maxAttempts, initialBackoff, maxBackoff, window,
                requestTimeout, jitterSeed, maxResendAge, onAuthFailure);
    }

    public PublisherSettings withMaxAttempts(int maxAttempts) {
        return new PublisherSettings(receivers, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed, maxResendAge, onAuthFailure);
    }

    public PublisherSettings withBackoff(Duration initialBackoff, Duration maxBackoff) {
        return new PublisherSettings(receivers, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed, maxResendAge, onAuthFailure);
    }

    public PublisherSettings withWindow(int window) {
        return new PublisherSettings(receivers, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed, maxResendAge, onAuthFailure);
    }

    public PublisherSettings withRequestTimeout(Duration requestTimeout) {
        return new PublisherSettings(receivers, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed, maxResendAge, onAuthFailure);
    }

    public PublisherSettings withJitterSeed(long jitterSeed) {
        return new PublisherSettings(receivers, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed, maxResendAge, onAuthFailure);
    }

    public PublisherSettings withMaxResendAge(Duration maxResendAge) {
        return new PublisherSettings(receivers, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed, Optional.of(maxResendAge), onAuthFailure);
    }

    public PublisherSettings withOnAuthFailure(AuthFailure onAuthFailure) {
        return new PublisherSettings(receivers, token, maxAttempts, initialBackoff, maxBackoff, window, requestTimeout,
                jitterSeed, maxResendAge, onAuthFailure);
    }
}
