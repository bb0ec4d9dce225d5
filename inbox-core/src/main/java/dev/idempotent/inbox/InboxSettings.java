package dev.idempotent.inbox;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
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
 * @param retention how long rows are kept before {@link InboxRetention#purge()} may delete them
 * @param clockSkewMargin how far senders' clocks may run ahead of this inbox's clock
 * @param senderMaxResendAge the oldest origin time a sender still resends, when known; the
 *     retention must cover it plus the skew margin
 * @param maxGroupSize the most messages of concurrent callers committed in one transaction, for
 *     adapters with a single writer
 * @param maxGroupWait how long a group waits for more callers before it commits; zero commits
 *     whatever is queued at once, so a lone caller never waits
 */
public record InboxSettings(
        String name,
        Duration busyTimeout,
        int maxContentBytes,
        ContentStorage contentStorage,
        InboxListener listener,
        Clock clock,
        Duration retention,
        Duration clockSkewMargin,
        Optional<Duration> senderMaxResendAge,
        int maxGroupSize,
        Duration maxGroupWait) {

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
    /** 30 days: longer than the resend windows of common brokers and retry policies. */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(30);
    /** 10 minutes. */
    public static final Duration DEFAULT_CLOCK_SKEW_MARGIN = Duration.ofMinutes(10);
    /** The largest skew margin: one day; clocks further apart than that need fixing first. */
    public static final Duration MAX_CLOCK_SKEW_MARGIN = Duration.ofDays(1);

    /** 100 messages. */
    public static final int DEFAULT_MAX_GROUP_SIZE = 100;
    /** The largest group: {@value} messages. */
    public static final int MAX_GROUP_SIZE_LIMIT = 10_000;
    /** The longest group wait: one second. */
    public static final Duration MAX_GROUP_WAIT = Duration.ofSeconds(1);

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,63}");

    /**
     * Checks every setting.
     *
     * @param name the inbox's name: one per consumer; the same id under two names is two businesses
     * @param busyTimeout how long {@code apply} waits for the write lock before
     *     {@link InboxBusyException}
     * @param maxContentBytes the largest {@link Content#size()} accepted
     * @param contentStorage whether content is kept beside its fingerprint
     * @param listener observes every call
     * @param clock the source of receive times
     * @param retention how long rows are kept before {@link InboxRetention#purge()} may delete them
     * @param clockSkewMargin how far senders' clocks may run ahead of this inbox's clock
     * @param senderMaxResendAge the oldest origin time a sender still resends, when known; the
     *     retention must cover it plus the skew margin
     * @param maxGroupSize the most messages of concurrent callers committed in one transaction, for
     *     adapters with a single writer
     * @param maxGroupWait how long a group waits for more callers before it commits; zero commits
     *     whatever is queued at once, so a lone caller never waits
     * @throws IllegalArgumentException if a value is out of range; the message names the field
     * @throws NullPointerException if a component is {@code null}
     */
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
        Objects.requireNonNull(clockSkewMargin, "clockSkewMargin");
        if (clockSkewMargin.isNegative() || clockSkewMargin.compareTo(MAX_CLOCK_SKEW_MARGIN) > 0) {
            throw new IllegalArgumentException("clockSkewMargin must be from 0 to 1 day, was " + clockSkewMargin);
        }
        Objects.requireNonNull(retention, "retention");
        if (retention.compareTo(clockSkewMargin) <= 0) {
            throw new IllegalArgumentException(
                    "retention must be longer than clockSkewMargin (" + clockSkewMargin + "), was " + retention);
        }
        if (maxGroupSize < 1 || maxGroupSize > MAX_GROUP_SIZE_LIMIT) {
            throw new IllegalArgumentException(
                    "maxGroupSize must be from 1 to " + MAX_GROUP_SIZE_LIMIT + ", was " + maxGroupSize);
        }
        Objects.requireNonNull(maxGroupWait, "maxGroupWait");
        if (maxGroupWait.isNegative() || maxGroupWait.compareTo(MAX_GROUP_WAIT) > 0) {
            throw new IllegalArgumentException("maxGroupWait must be from 0 to 1 second, was " + maxGroupWait);
        }
        Objects.requireNonNull(senderMaxResendAge, "senderMaxResendAge");
        senderMaxResendAge.ifPresent(age -> {
            if (age.isNegative() || age.isZero()) {
                throw new IllegalArgumentException("senderMaxResendAge must be positive, was " + age);
            }
        });
    }

    /**
     * Refuses a retention that does not cover the senders' resend window: a resend whose earlier
     * delivery was already purged would otherwise be refused as stale, or, without an origin time,
     * applied a second time. Called by {@link InboxBuilder#build()}, once all settings are known.
     *
     * @return these settings
     * @throws IllegalArgumentException if {@code retention < senderMaxResendAge + clockSkewMargin}
     */
    public InboxSettings requireRetentionCoversResends() {
        senderMaxResendAge.ifPresent(age -> {
            if (retention.compareTo(age.plus(clockSkewMargin)) < 0) {
                throw new IllegalArgumentException("retention (" + retention + ") must be at least senderMaxResendAge ("
                        + age + ") plus clockSkewMargin (" + clockSkewMargin + "), or resends of purged ids would be"
                        + " refused as stale");
            }
        });
        return this;
    }

    /**
     * The defaults: name {@code default}, 5 s busy timeout, 1 MiB content, fingerprints only, 30
     * days retention, 10 minutes clock skew margin, no known sender resend age, groups of up to 100
     * messages committed without waiting.
     *
     * @return the default settings
     */
    public static InboxSettings defaults() {
        return new InboxSettings(
                DEFAULT_NAME,
                DEFAULT_BUSY_TIMEOUT,
                DEFAULT_MAX_CONTENT_BYTES,
                ContentStorage.FINGERPRINT_ONLY,
                InboxListener.NONE,
                Clock.systemUTC(),
                DEFAULT_RETENTION,
                DEFAULT_CLOCK_SKEW_MARGIN,
                Optional.empty(),
                DEFAULT_MAX_GROUP_SIZE,
                Duration.ZERO);
    }

    /**
     * These settings with {@code name} replaced.
     *
     * @param name the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withName(String name) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code busyTimeout} replaced.
     *
     * @param busyTimeout the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withBusyTimeout(Duration busyTimeout) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code maxContentBytes} replaced.
     *
     * @param maxContentBytes the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withMaxContentBytes(int maxContentBytes) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code contentStorage} replaced.
     *
     * @param contentStorage the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withContentStorage(ContentStorage contentStorage) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code listener} replaced.
     *
     * @param listener the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withListener(InboxListener listener) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code clock} replaced.
     *
     * @param clock the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withClock(Clock clock) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code retention} replaced.
     *
     * @param retention the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withRetention(Duration retention) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code clockSkewMargin} replaced.
     *
     * @param clockSkewMargin the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withClockSkewMargin(Duration clockSkewMargin) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code senderMaxResendAge} replaced.
     *
     * @param senderMaxResendAge the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withSenderMaxResendAge(Optional<Duration> senderMaxResendAge) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code maxGroupSize} replaced.
     *
     * @param maxGroupSize the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withMaxGroupSize(int maxGroupSize) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }

    /**
     * These settings with {@code maxGroupWait} replaced.
     *
     * @param maxGroupWait the new value
     * @return a validated copy; these settings are unchanged
     * @throws IllegalArgumentException if the value is refused; the message names the field
     */
    public InboxSettings withMaxGroupWait(Duration maxGroupWait) {
        return new InboxSettings(name, busyTimeout, maxContentBytes, contentStorage, listener, clock, retention, clockSkewMargin, senderMaxResendAge, maxGroupSize, maxGroupWait);
    }
}
