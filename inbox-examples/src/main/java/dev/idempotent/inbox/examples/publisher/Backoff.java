package dev.idempotent.inbox.examples.publisher;

import java.time.Duration;
import java.util.Optional;
import java.util.Random;

/**
 * Exponential backoff with jitter: after the n-th uncertain attempt, wait a random time between
 * half and all of {@code initial * 2^(n-1)}, capped at {@code max}. The jitter keeps many
 * publishers that failed together from retrying together.
 */
final class Backoff {

    private final Duration initial;
    private final Duration max;
    private final Random random;

    Backoff(Duration initial, Duration max, long seed) {
        this.initial = initial;
        this.max = max;
        this.random = new Random(seed);
    }

    /**
     * The wait after {@code attempts} uncertain attempts; at least what the receiver asked for
     * in {@code Retry-After}, but never more than the cap.
     */
    Duration after(int attempts, Optional<Duration> retryAfter) {
        long ceiling = initial.toNanos();
        for (int i = 1; i < attempts && ceiling < max.toNanos(); i++) {
            ceiling *= 2;
        }
        ceiling = Math.min(ceiling, max.toNanos());
        long jittered;
        synchronized (random) {
            jittered = ceiling / 2 + (long) (random.nextDouble() * (ceiling - ceiling / 2));
        }
        long asked = retryAfter.map(Duration::toNanos).orElse(0L);
        return Duration.ofNanos(Math.min(Math.max(jittered, asked), max.toNanos()));
    }
}
