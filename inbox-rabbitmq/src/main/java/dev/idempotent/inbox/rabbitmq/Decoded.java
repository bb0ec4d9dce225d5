package dev.idempotent.inbox.rabbitmq;

import dev.idempotent.inbox.Content;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A delivery's body as the consumer applies it: the inbox {@link Content} that decides between
 * duplicate and conflict, the value the effect works with, and the sender's origin time if the
 * message carries one.
 *
 * @param <T> the decoded value's type
 * @param content what "the same business" means for the delivery's id; not {@code null}
 * @param value what the effect is given; may be {@code null}
 * @param originTime when the sender created the business; empty when unknown
 */
public record Decoded<T>(Content content, T value, Optional<Instant> originTime) {

    /**
     * Checks that {@code content} and {@code originTime} are not {@code null}.
     *
     * @param content what "the same business" means for the delivery's id
     * @param value what the effect is given; may be {@code null}
     * @param originTime when the sender created the business; empty when unknown
     * @throws NullPointerException if {@code content} or {@code originTime} is {@code null}
     */
    public Decoded {
        Objects.requireNonNull(content, "content");
        Objects.requireNonNull(originTime, "originTime");
    }

    /**
     * A decoded delivery without an origin time.
     *
     * @param <T> the decoded value's type
     * @param content the inbox content; not {@code null}
     * @param value what the effect is given; may be {@code null}
     * @return the decoded delivery
     */
    public static <T> Decoded<T> of(Content content, T value) {
        return new Decoded<>(content, value, Optional.empty());
    }

    /**
     * This decoded delivery with the sender's origin time, so that a message older than the inbox
     * can judge is refused as stale instead of applied as new.
     *
     * @param originTime when the sender created the business; not {@code null}
     * @return a copy with that origin time
     */
    public Decoded<T> withOriginTime(Instant originTime) {
        return new Decoded<>(content, value, Optional.of(Objects.requireNonNull(originTime, "originTime")));
    }
}
