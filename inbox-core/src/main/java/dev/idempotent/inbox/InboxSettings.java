package dev.idempotent.inbox;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The optional settings of an inbox, as {@link InboxBuilder} collects them. Immutable; every
 * {@code with} method returns a validated copy and names the field it refuses.
 *
 * @param name the inbox's name: one per consumer; the same id under two names is two businesses
 * @param busyTimeout how long {@code apply} waits for the write lock before
 *     {@link InboxBusyException}
 * @param maxContentBytes the largest {@link Content#size()} accepted
 * @param contentStorage whether content is kept beside its fingerprint
 * @param listener observes every call
 * @param clock the source of receive times
 */
public record InboxSettings(
        String name,
        Duration busyTimeout,
        int maxContentBytes,
        ContentStorage contentStorage,
        InboxListener listener,
        Clock clock) {

    /** {@value}: the name of an inbox that was given none. */
    public static final String DEFAULT_NAME = "default";
    /** 5 seconds. */
    public static final Duration DEFAULT_BUSY_TIMEOUT = Duration.ofSeconds(5);
    /** {@value} bytes (1 MiB). */
    public static final int DEFAULT_MAX_CONTENT_BYTES = 1 << 20;
    /** The largest value {@code maxContentBytes} may take: {@value} bytes (16 MiB). */
    public static final int MAX_CONTENT_BYTES_LIMIT = 16 << 20;
    /** The longest busy timeout: one hour; a longer wait is a hang, not a timeout. */
    public static final Duration MAX_BUSY_TIMEOUT = Duration.ofHours(1);

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,63}");

    public InboxSettings {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "name must be 1 to 64 letters, digits, '.', '_', ':' or '-', starting with a letter or digit: '"
                            + name + "'");
        }
        Objects.requireNonNull(busyTimeout, "busyTimeout");
        if (busyTimeout.isNegative() || busyTimeout.compareTo(MAX_BUSY_TIMEOUT) > 0) {
            throw new IllegalArgumentException("busyTimeout must be from 0 to 1 hour, was " + busyTimeout);
        }
        if (maxContentBytes < 1 || maxContentBytes > MAX_CONTENT_BYTES_LIMIT) {
            throw new IllegalArgumentException(
                    "maxContentBytes must be from 1 to " + MAX_CONTENT_BYTES_LIMIT + ", was " + maxContentBytes);
        }
        Objects.requireNonNull(contentStorage, "contentStorage");
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(clock, "clock");
    }

    /** The defaults: name {@code default}, 5 s busy timeout, 1 MiB content, fingerprints only. */
    public static InboxSettings defaults() {
        return new InboxSettings(
                DEFAULT_NAME,
                DEFAULT_BUSY_TIMEOUT,
                DEFAULT_MAX_CONTENT_BYTES,
                ContentStorage.FINGERPRINT_ONLY,
                InboxListener.NONE,
                Clock.systemUTC());
    }

    public InboxSettings withName(String name) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock);
    }

    public InboxSettings withBusyTimeout(Duration busyTimeout) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock);
    }

    public InboxSettings withMaxContentBytes(int maxContentBytes) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock);
    }

    public InboxSettings withContentStorage(ContentStorage contentStorage) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock);
    }

    public InboxSettings withListener(InboxListener listener) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock);
    }

    public InboxSettings withClock(Clock clock) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock);
    }
}
