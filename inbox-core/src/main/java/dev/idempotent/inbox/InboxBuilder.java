package dev.idempotent.inbox;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * An immutable builder for the optional settings of an inbox; each adapter hands one out from its
 * factory ({@code SqliteInbox.builder(jdbi)}, for example). Every method returns a new builder, so
 * a configured builder can be shared and reused. A bad value is refused at once with an
 * {@link IllegalArgumentException} that names the field.
 *
 * <p>Defaults: see {@link InboxSettings#defaults()}.
 *
 * @param <I> the inbox type the adapter builds
 */
public final class InboxBuilder<I extends Inbox<?>> {

    private final InboxSettings settings;
    private final Function<InboxSettings, I> factory;

    /**
     * For adapters: a builder starting from the defaults that builds with {@code factory}.
     *
     * @param factory opens the inbox for validated settings
     */
    public InboxBuilder(Function<InboxSettings, I> factory) {
        this(InboxSettings.defaults(), factory);
    }

    private InboxBuilder(InboxSettings settings, Function<InboxSettings, I> factory) {
        this.settings = settings;
        this.factory = Objects.requireNonNull(factory, "factory");
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
        return new InboxBuilder<>(settings.withName(name), factory);
    }

    /**
     * How long to wait for the write lock (default 5 s) before {@link InboxBusyException}.
     *
     * @param busyTimeout from zero to {@link InboxSettings#MAX_BUSY_TIMEOUT}
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    public InboxBuilder<I> busyTimeout(Duration busyTimeout) {
        return new InboxBuilder<>(settings.withBusyTimeout(busyTimeout), factory);
    }

    /**
     * The largest content accepted, in bytes (default 1 MiB, at most 16 MiB).
     *
     * @param maxContentBytes from 1 to {@link InboxSettings#MAX_CONTENT_BYTES_LIMIT}
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    public InboxBuilder<I> maxContentBytes(int maxContentBytes) {
        return new InboxBuilder<>(settings.withMaxContentBytes(maxContentBytes), factory);
    }

    /**
     * Whether content is kept beside its fingerprint (default fingerprint only).
     *
     * @param contentStorage what to keep; not {@code null}
     * @return a new builder with that setting
     */
    public InboxBuilder<I> contentStorage(ContentStorage contentStorage) {
        return new InboxBuilder<>(settings.withContentStorage(contentStorage), factory);
    }

    /**
     * The observer of every call (default none).
     *
     * @param listener the listener; not {@code null} ({@link InboxListener#NONE} for none)
     * @return a new builder with that listener
     */
    public InboxBuilder<I> listener(InboxListener listener) {
        return new InboxBuilder<>(settings.withListener(listener), factory);
    }

    /**
     * The source of receive times (default the UTC system clock).
     *
     * @param clock the clock; not {@code null}
     * @return a new builder with that clock
     */
    public InboxBuilder<I> clock(Clock clock) {
        return new InboxBuilder<>(settings.withClock(clock), factory);
    }

    /**
     * How long rows are kept before {@link InboxRetention#purge()} may delete them (default 30
     * days). Set it longer than any sender resends: the inbox cannot recognise an id it forgot.
     *
     * @param retention longer than the clock skew margin
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    public InboxBuilder<I> retention(Duration retention) {
        return new InboxBuilder<>(settings.withRetention(retention), factory);
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
        return new InboxBuilder<>(settings.withClockSkewMargin(clockSkewMargin), factory);
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
        return new InboxBuilder<>(settings.withSenderMaxResendAge(Optional.of(senderMaxResendAge)), factory);
    }

    /**
     * The most messages of concurrent callers committed in one transaction (default 100), where
     * the inbox commits in groups: always on SQLite, on PostgreSQL when built with group commit.
     * One commit, one disk sync, serves them all.
     *
     * @param maxGroupSize from 1 to {@link InboxSettings#MAX_GROUP_SIZE_LIMIT}
     * @return a new builder with that setting
     * @throws IllegalArgumentException if the value is out of range
     */
    public InboxBuilder<I> maxGroupSize(int maxGroupSize) {
        return new InboxBuilder<>(settings.withMaxGroupSize(maxGroupSize), factory);
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
        return new InboxBuilder<>(settings.withMaxGroupWait(maxGroupWait), factory);
    }

    /** {@return the settings so far} */
    public InboxSettings settings() {
        return settings;
    }

    /**
     * Opens the inbox, creating its schema if the database has none yet.
     *
     * @return the open inbox; close it when done
     * @throws IllegalArgumentException if the retention does not cover the senders' resend age
     * @throws InboxStorageException if the database cannot be opened or holds a newer schema
     */
    public I build() {
        return factory.apply(settings.requireRetentionCoversResends());
    }
}
