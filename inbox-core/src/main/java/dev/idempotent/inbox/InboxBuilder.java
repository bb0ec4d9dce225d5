package dev.idempotent.inbox;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * An immutable builder for the optional settings of an inbox; each adapter hands one out from its
 * factory ({@code SqliteInbox.builder(jdbi)}, for example). Every method returns a new builder, so
 * a configured builder can be shared and reused. A bad value is refused at once with an
 * {@link IllegalArgumentException} that names the field; a combination of values that does not
 * hold together (a retention shorter than the skew margin, a group setting for an inbox that does
 * not commit in groups) is refused by {@link #settings()} and {@link #build()}, naming the fields.
 *
 * <p>Defaults: name {@code default}, 5 s busy timeout, 1 MiB content, fingerprints only, 30 days
 * retention, 10 minutes clock skew margin, no known sender resend age, the adapter's commit mode,
 * groups of up to 100 messages committed without waiting, the caller's MDC carried to its effect,
 * tables created if absent.
 *
 * @param <I> the inbox type the adapter builds
 */
public final class InboxBuilder<I extends Inbox<?>> {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,63}");

    private final Values values;
    private final Function<InboxSettings, I> factory;

    /**
     * For adapters: a builder starting from the defaults that builds with {@code factory}.
     *
     * @param defaultCommitMode the commit mode of the adapter's inboxes unless the user chooses
     *     another
     * @param factory opens the inbox for validated settings
     */
    public InboxBuilder(CommitMode defaultCommitMode, Function<InboxSettings, I> factory) {
        this(new Values(Objects.requireNonNull(defaultCommitMode, "defaultCommitMode")), factory);
    }

    private InboxBuilder(Values values, Function<InboxSettings, I> factory) {
        this.values = values;
        this.factory = Objects.requireNonNull(factory, "factory");
    }

    private InboxBuilder<I> with(Consumer<Values> change) {
        Values changed = values.copy();
        change.accept(changed);
        return new InboxBuilder<>(changed, factory);
    }

    private static Duration within(String field, Duration value, Duration min, Duration max, String range) {
        Objects.requireNonNull(value, field);
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(field + " must be " + range + ", was " + value);
        }
        return value;
    }

    /**
     * The inbox's name (default {@code default}); one per consumer sharing a database.
     *
     * @param name 1 to 64 letters, digits, {@code .}, {@code _}, {@code :} or {@code -}, starting
     *     with a letter or digit
     * @return a new builder with that name
     * @throws IllegalArgumentException if the name does not have that form
     * @throws NullPointerException if {@code name} is {@code null}
     */
    public InboxBuilder<I> name(String name) {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("name must be 1 to 64 letters, digits, '.', '_', ':' or '-', starting"
                    + " with a letter or digit: '" + name + "'");
        }
        return with(v -> v.name = name);
    }

    /**
     * How long to wait for the write lock (default 5 s) before {@link InboxBusyException}.
     *
     * @param busyTimeout from zero to {@link InboxSettings#MAX_BUSY_TIMEOUT}
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    public InboxBuilder<I> busyTimeout(Duration busyTimeout) {
        Duration checked = within("busyTimeout", busyTimeout, Duration.ZERO, InboxSettings.MAX_BUSY_TIMEOUT, "from 0 to 1 hour");
        return with(v -> v.busyTimeout = checked);
    }

    /**
     * The largest content accepted, in bytes (default 1 MiB, at most 16 MiB).
     *
     * @param maxContentBytes from 1 to {@link InboxSettings#MAX_CONTENT_BYTES_LIMIT}
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    public InboxBuilder<I> maxContentBytes(int maxContentBytes) {
        if (maxContentBytes < 1 || maxContentBytes > InboxSettings.MAX_CONTENT_BYTES_LIMIT) {
            throw new IllegalArgumentException("maxContentBytes must be from 1 to " + InboxSettings.MAX_CONTENT_BYTES_LIMIT
                    + ", was " + maxContentBytes);
        }
        return with(v -> v.maxContentBytes = maxContentBytes);
    }

    /**
     * The largest result stored, in bytes, as the {@link ResultCodec} returned it (sealed, if it
     * is): default 64 KiB, at most 64 MiB. A call whose result is larger fails with a
     * {@link StoredResultException} of kind {@link StoredResultException.Kind#TOO_LARGE} and its
     * transaction (or, in a batch or a joined call, its savepoint) rolls back: nothing is recorded,
     * and a retry runs the effect again. A result is never truncated. Applies only to calls made
     * through {@link Inbox#storingResults}. On MariaDB a result whose statement would not fit the
     * server's {@code max_allowed_packet} fails the same way, as too large, before it is sent.
     *
     * @param maxResultBytes from 1 to {@link InboxSettings#MAX_RESULT_BYTES_LIMIT}
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    @Beta
    public InboxBuilder<I> maxResultBytes(int maxResultBytes) {
        if (maxResultBytes < 1 || maxResultBytes > InboxSettings.MAX_RESULT_BYTES_LIMIT) {
            throw new IllegalArgumentException("maxResultBytes must be from 1 to " + InboxSettings.MAX_RESULT_BYTES_LIMIT
                    + ", was " + maxResultBytes);
        }
        return with(v -> v.maxResultBytes = maxResultBytes);
    }

    /**
     * Whether content is kept beside its fingerprint (default fingerprint only).
     *
     * @param contentStorage what to keep; not {@code null}
     * @return a new builder with that setting
     */
    public InboxBuilder<I> contentStorage(ContentStorage contentStorage) {
        Objects.requireNonNull(contentStorage, "contentStorage");
        return with(v -> v.contentStorage = contentStorage);
    }

    /**
     * The observer of every call (default none).
     *
     * @param listener the listener; not {@code null} ({@link InboxListener#NONE} for none)
     * @return a new builder with that listener
     */
    public InboxBuilder<I> listener(InboxListener listener) {
        Objects.requireNonNull(listener, "listener");
        return with(v -> v.listener = listener);
    }

    /**
     * The source of receive times (default the UTC system clock).
     *
     * @param clock the clock; not {@code null}
     * @return a new builder with that clock
     */
    public InboxBuilder<I> clock(Clock clock) {
        Objects.requireNonNull(clock, "clock");
        return with(v -> v.clock = clock);
    }

    /**
     * How long rows are kept before {@link InboxRetention#purge()} may delete them (default 30
     * days). Set it longer than any sender resends: the inbox cannot recognise an id it forgot.
     *
     * @param retention positive, and longer than the clock skew margin ({@link #settings()} checks
     *     that)
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is not positive
     */
    public InboxBuilder<I> retention(Duration retention) {
        Objects.requireNonNull(retention, "retention");
        if (retention.isNegative() || retention.isZero()) {
            throw new IllegalArgumentException("retention must be positive, was " + retention);
        }
        return with(v -> v.retention = retention);
    }

    /**
     * How far the clocks of senders that stamp origin times may run ahead of this inbox's clock
     * (default 10 minutes); widens the window in which old messages are refused as stale.
     *
     * @param clockSkewMargin from zero to {@link InboxSettings#MAX_CLOCK_SKEW_MARGIN}, and shorter
     *     than the retention
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    public InboxBuilder<I> clockSkewMargin(Duration clockSkewMargin) {
        Duration checked = within("clockSkewMargin", clockSkewMargin, Duration.ZERO, InboxSettings.MAX_CLOCK_SKEW_MARGIN,
                "from 0 to 1 day");
        return with(v -> v.clockSkewMargin = checked);
    }

    /**
     * The oldest origin time, relative to now, that senders still resend (their give-up age). When
     * set, {@link #build()} refuses a retention shorter than it plus the skew margin.
     *
     * @param senderMaxResendAge a positive duration
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the age is zero or negative
     */
    public InboxBuilder<I> senderMaxResendAge(Duration senderMaxResendAge) {
        Objects.requireNonNull(senderMaxResendAge, "senderMaxResendAge");
        if (senderMaxResendAge.isNegative() || senderMaxResendAge.isZero()) {
            throw new IllegalArgumentException("senderMaxResendAge must be positive, was " + senderMaxResendAge);
        }
        return with(v -> v.senderMaxResendAge = senderMaxResendAge);
    }

    /**
     * The most messages of concurrent callers committed in one transaction (default 100), where
     * the inbox commits in groups ({@link CommitMode#GROUP}; refused for any other mode).
     * One commit, one disk sync, serves them all.
     *
     * @param maxGroupSize from 1 to {@link InboxSettings#MAX_GROUP_SIZE_LIMIT}
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    public InboxBuilder<I> maxGroupSize(int maxGroupSize) {
        if (maxGroupSize < 1 || maxGroupSize > InboxSettings.MAX_GROUP_SIZE_LIMIT) {
            throw new IllegalArgumentException("maxGroupSize must be from 1 to " + InboxSettings.MAX_GROUP_SIZE_LIMIT
                    + ", was " + maxGroupSize);
        }
        return with(v -> v.maxGroupSize = maxGroupSize);
    }

    /**
     * How long a group waits for more callers before it commits (default zero: commit whatever is
     * queued at once, so a lone caller never waits).
     *
     * @param maxGroupWait from zero to {@link InboxSettings#MAX_GROUP_WAIT}
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    public InboxBuilder<I> maxGroupWait(Duration maxGroupWait) {
        Duration checked = within("maxGroupWait", maxGroupWait, Duration.ZERO, InboxSettings.MAX_GROUP_WAIT, "from 0 to 1 second");
        return with(v -> v.maxGroupWait = checked);
    }

    /**
     * How concurrent calls become transactions (default: the adapter's, see its javadoc).
     *
     * @param commitMode the mode; not {@code null}
     * @return a new builder with that mode
     */
    @Beta
    public InboxBuilder<I> commitMode(CommitMode commitMode) {
        Objects.requireNonNull(commitMode, "commitMode");
        return with(v -> v.commitMode = commitMode);
    }

    /**
     * What is carried from a caller's thread to the thread that runs its effect under
     * {@link CommitMode#GROUP} (default {@link CallContext#mdc()}).
     *
     * @param callContext the context; not {@code null} ({@link CallContext#none()} for none)
     * @return a new builder with that context
     */
    @Beta
    public InboxBuilder<I> callContext(CallContext callContext) {
        Objects.requireNonNull(callContext, "callContext");
        return with(v -> v.callContext = callContext);
    }

    /**
     * What watches each {@code apply} and {@code applyJoined} from its call to its final outcome
     * (default {@link CallObserver#NONE}); {@code InboxObservations} of {@code inbox-micrometer}
     * makes each call a Micrometer {@code Observation}.
     *
     * @param observer the observer; not {@code null} ({@link CallObserver#NONE} for none)
     * @return a new builder with that observer
     */
    @Beta
    public InboxBuilder<I> observer(CallObserver observer) {
        Objects.requireNonNull(observer, "observer");
        return with(v -> v.observer = observer);
    }

    /**
     * What the inbox does about its tables when it is built (default {@link SchemaMode#CREATE}):
     * create them if absent, only check them, or neither.
     *
     * @param schemaMode the mode; not {@code null}
     * @return a new builder with that mode
     */
    public InboxBuilder<I> schema(SchemaMode schemaMode) {
        Objects.requireNonNull(schemaMode, "schemaMode");
        return with(v -> v.schemaMode = schemaMode);
    }

    /**
     * Where the inbox keeps its tables (default {@link InboxTables#defaults()}: prefix
     * {@code inbox_}, in the connection's own schema or database). Inboxes on different tables
     * share a database without seeing each other's records, horizons or schema versions.
     *
     * @param tables the table names; not {@code null}
     * @return a new builder with those names
     */
    public InboxBuilder<I> tables(InboxTables tables) {
        Objects.requireNonNull(tables, "tables");
        return with(v -> v.tables = tables);
    }

    /**
     * The settings so far, checked as a whole.
     *
     * @return the validated settings
     * @throws IllegalArgumentException if the values do not hold together: the retention is not
     *     longer than the skew margin or does not cover the senders' resend age, or a group setting
     *     was given for an inbox that does not commit in groups; the message names the fields
     */
    public InboxSettings settings() {
        Values v = values;
        if (v.retention.compareTo(v.clockSkewMargin) <= 0) {
            throw new IllegalArgumentException("retention must be longer than clockSkewMargin (" + v.clockSkewMargin
                    + "), was " + v.retention);
        }
        if (v.senderMaxResendAge != null && v.retention.compareTo(v.senderMaxResendAge.plus(v.clockSkewMargin)) < 0) {
            throw new IllegalArgumentException("retention (" + v.retention + ") must be at least senderMaxResendAge ("
                    + v.senderMaxResendAge + ") plus clockSkewMargin (" + v.clockSkewMargin + "), or resends of purged"
                    + " ids would be refused as stale");
        }
        if (v.commitMode() != CommitMode.GROUP && (v.maxGroupSize != null || v.maxGroupWait != null)) {
            throw new IllegalArgumentException((v.maxGroupSize != null ? "maxGroupSize" : "maxGroupWait")
                    + " applies only to commitMode GROUP; this inbox commits " + v.commitMode());
        }
        return new InboxSettings(v);
    }

    /**
     * Opens the inbox, creating its schema if the database has none yet (or only checking it, as
     * {@link #schema(SchemaMode)} says).
     *
     * @return the open inbox; close it when done
     * @throws IllegalArgumentException if the retention does not cover the senders' resend age
     * @throws InboxStorageException if the database cannot be opened or holds a newer schema, or,
     *     under {@link SchemaMode#VALIDATE}, lacks the inbox's tables or schema version
     *     ({@link InboxStorageException.Kind#SCHEMA_MISSING})
     */
    public I build() {
        return factory.apply(settings());
    }

    /** The values set so far; copied for every change, so a builder never changes. */
    static final class Values {
        String name = InboxSettings.DEFAULT_NAME;
        Duration busyTimeout = InboxSettings.DEFAULT_BUSY_TIMEOUT;
        int maxContentBytes = InboxSettings.DEFAULT_MAX_CONTENT_BYTES;
        int maxResultBytes = InboxSettings.DEFAULT_MAX_RESULT_BYTES;
        ContentStorage contentStorage = ContentStorage.FINGERPRINT_ONLY;
        InboxListener listener = InboxListener.NONE;
        Clock clock = Clock.systemUTC();
        Duration retention = InboxSettings.DEFAULT_RETENTION;
        Duration clockSkewMargin = InboxSettings.DEFAULT_CLOCK_SKEW_MARGIN;
        Duration senderMaxResendAge;
        final CommitMode defaultCommitMode;
        CommitMode commitMode;
        // Null until set, so that a group setting given to an inbox that commits per caller is refused.
        Integer maxGroupSize;
        Duration maxGroupWait;
        CallContext callContext = CallContext.mdc();
        CallObserver observer = CallObserver.NONE;
        SchemaMode schemaMode = SchemaMode.CREATE;
        InboxTables tables = InboxTables.defaults();

        Values(CommitMode defaultCommitMode) {
            this.defaultCommitMode = defaultCommitMode;
        }

        CommitMode commitMode() {
            return commitMode == null ? defaultCommitMode : commitMode;
        }

        Values copy() {
            Values copy = new Values(defaultCommitMode);
            copy.name = name;
            copy.busyTimeout = busyTimeout;
            copy.maxContentBytes = maxContentBytes;
            copy.maxResultBytes = maxResultBytes;
            copy.contentStorage = contentStorage;
            copy.listener = listener;
            copy.clock = clock;
            copy.retention = retention;
            copy.clockSkewMargin = clockSkewMargin;
            copy.senderMaxResendAge = senderMaxResendAge;
            copy.commitMode = commitMode;
            copy.maxGroupSize = maxGroupSize;
            copy.maxGroupWait = maxGroupWait;
            copy.callContext = callContext;
            copy.observer = observer;
            copy.schemaMode = schemaMode;
            copy.tables = tables;
            return copy;
        }
    }
}
