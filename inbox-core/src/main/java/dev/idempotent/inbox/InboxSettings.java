package dev.idempotent.inbox;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

/**
 * The settings of one inbox: an immutable value that {@link InboxBuilder} validates and builds,
 * and adapters read. Every value here has passed its check; see the builder's methods for what
 * each setting means and the range it takes.
 */
public final class InboxSettings {

    /** {@value}: the name of an inbox that was given none. */
    public static final String DEFAULT_NAME = "default";
    /** 5 seconds. */
    public static final Duration DEFAULT_BUSY_TIMEOUT = Duration.ofSeconds(5);
    /** {@value} bytes (1 MiB). */
    public static final int DEFAULT_MAX_CONTENT_BYTES = 1 << 20;
    /** The largest value {@code maxContentBytes} may take: {@value} bytes (16 MiB). */
    public static final int MAX_CONTENT_BYTES_LIMIT = 16 << 20;
    /**
     * {@value} bytes (64 KiB): room for the answer a retry needs (an id, a confirmation, a response
     * body) while every duplicate that reads it back stays cheap.
     */
    public static final int DEFAULT_MAX_RESULT_BYTES = 64 << 10;
    /**
     * The largest value {@code maxResultBytes} may take: {@value} bytes (64 MiB). A result is held
     * in memory whole, when it is encoded, written and read back on every duplicate; what is larger
     * belongs in an object store, with its key as the result.
     */
    public static final int MAX_RESULT_BYTES_LIMIT = 64 << 20;
    /** The longest busy timeout: one hour; a longer wait is a hang, not a timeout. */
    public static final Duration MAX_BUSY_TIMEOUT = Duration.ofHours(1);
    /** 30 days: longer than the resend windows of common brokers and retry policies. */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(30);
    /** 10 minutes. */
    public static final Duration DEFAULT_CLOCK_SKEW_MARGIN = Duration.ofMinutes(10);
    /** The largest skew margin: one day; clocks further apart than that need fixing first. */
    public static final Duration MAX_CLOCK_SKEW_MARGIN = Duration.ofDays(1);
    /** {@value} messages. */
    public static final int DEFAULT_MAX_GROUP_SIZE = 100;
    /** The largest group: {@value} messages. */
    public static final int MAX_GROUP_SIZE_LIMIT = 10_000;
    /** The longest group wait: one second. */
    public static final Duration MAX_GROUP_WAIT = Duration.ofSeconds(1);

    private final String name;
    private final Duration busyTimeout;
    private final int maxContentBytes;
    private final int maxResultBytes;
    private final ContentStorage contentStorage;
    private final InboxListener listener;
    private final Clock clock;
    private final Duration retention;
    private final Duration clockSkewMargin;
    private final Optional<Duration> senderMaxResendAge;
    private final CommitMode commitMode;
    private final int maxGroupSize;
    private final Duration maxGroupWait;
    private final CallContext callContext;
    private final CallObserver observer;
    private final SchemaMode schemaMode;
    private final InboxTables tables;

    InboxSettings(InboxBuilder.Values values) {
        this.name = values.name;
        this.busyTimeout = values.busyTimeout;
        this.maxContentBytes = values.maxContentBytes;
        this.maxResultBytes = values.maxResultBytes;
        this.contentStorage = values.contentStorage;
        this.listener = values.listener;
        this.clock = values.clock;
        this.retention = values.retention;
        this.clockSkewMargin = values.clockSkewMargin;
        this.senderMaxResendAge = Optional.ofNullable(values.senderMaxResendAge);
        this.commitMode = values.commitMode();
        this.maxGroupSize = values.maxGroupSize == null ? DEFAULT_MAX_GROUP_SIZE : values.maxGroupSize;
        this.maxGroupWait = values.maxGroupWait == null ? Duration.ZERO : values.maxGroupWait;
        this.callContext = values.callContext;
        this.observer = values.observer;
        this.schemaMode = values.schemaMode;
        this.tables = values.tables;
    }

    /** {@return the inbox's name}: one per consumer; the same id under two names is two businesses */
    public String name() {
        return name;
    }

    /** {@return how long a call waits for the write lock before {@link InboxBusyException}} */
    public Duration busyTimeout() {
        return busyTimeout;
    }

    /** {@return the largest {@link Content#size()} accepted} */
    public int maxContentBytes() {
        return maxContentBytes;
    }

    /**
     * {@return the largest stored result accepted, in bytes, as its codec returned it}; see
     * {@link InboxBuilder#maxResultBytes(int)}
     */
    @Beta
    public int maxResultBytes() {
        return maxResultBytes;
    }

    /** {@return whether content is kept beside its fingerprint} */
    public ContentStorage contentStorage() {
        return contentStorage;
    }

    /** {@return the observer of every call} */
    public InboxListener listener() {
        return listener;
    }

    /** {@return the source of receive times and of the retention's cutoff} */
    public Clock clock() {
        return clock;
    }

    /** {@return how long rows are kept before {@link InboxRetention#purge()} may delete them} */
    public Duration retention() {
        return retention;
    }

    /** {@return how far senders' clocks may run ahead of this inbox's clock} */
    public Duration clockSkewMargin() {
        return clockSkewMargin;
    }

    /** {@return the oldest origin time, relative to now, that senders still resend, if known} */
    public Optional<Duration> senderMaxResendAge() {
        return senderMaxResendAge;
    }

    /** {@return how concurrent calls become transactions} */
    public CommitMode commitMode() {
        return commitMode;
    }

    /** {@return the most messages committed in one transaction under {@link CommitMode#GROUP}} */
    public int maxGroupSize() {
        return maxGroupSize;
    }

    /** {@return how long a group waits for more callers before it commits, under {@link CommitMode#GROUP}} */
    public Duration maxGroupWait() {
        return maxGroupWait;
    }

    /** {@return what is carried from a caller's thread to the thread that runs its effect} */
    public CallContext callContext() {
        return callContext;
    }

    /** {@return what watches each call from its start to its final outcome} */
    public CallObserver observer() {
        return observer;
    }

    /** {@return what the inbox does about its tables when it is built} */
    public SchemaMode schemaMode() {
        return schemaMode;
    }

    /** {@return where the inbox keeps its tables} */
    public InboxTables tables() {
        return tables;
    }

    @Override
    public String toString() {
        return "InboxSettings[name=" + name + ", busyTimeout=" + busyTimeout + ", maxContentBytes=" + maxContentBytes
                + ", maxResultBytes=" + maxResultBytes                + ", contentStorage=" + contentStorage + ", retention=" + retention + ", clockSkewMargin="
                + clockSkewMargin + ", senderMaxResendAge=" + senderMaxResendAge + ", commitMode=" + commitMode
                + ", maxGroupSize=" + maxGroupSize + ", maxGroupWait=" + maxGroupWait + ", schemaMode=" + schemaMode
                + ", tables=" + tables + "]";
    }
}
