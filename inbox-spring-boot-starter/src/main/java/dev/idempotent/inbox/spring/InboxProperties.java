package dev.idempotent.inbox.spring;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.time.Duration;
import java.util.function.UnaryOperator;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code inbox.*} properties: the settings of the inbox the auto-configuration builds over the
 * application's {@code DataSource}. Checked when they are bound, so a bad value fails start-up with
 * a message that names the property ({@code inbox.busy-timeout: busyTimeout must be from 0 to 1
 * hour, was PT2H}); an unset one keeps the library's default.
 *
 * <p>The descriptions of the components below are also the IDE's, through the configuration
 * metadata, so they are plain sentences.
 *
 * @param name The inbox's name, one per consumer sharing a database: 1 to 64 letters, digits, '.',
 *     '_', ':' or '-', starting with a letter or digit.
 * @param busyTimeout How long a call waits for the write lock, or for a concurrent claim of the
 *     same id, before it fails as busy; at most 1h.
 * @param retention How long ids are remembered before a purge may delete them; longer than the
 *     clock-skew margin (10 minutes) and than any sender resends.
 * @param commitMode How the inbox's own transactions are formed: 'group' by default on SQLite,
 *     'per-caller' elsewhere. Calls that join a Spring-managed transaction run in it, whatever this
 *     says.
 * @param schema What the inbox does about its tables at start-up: 'create' them if absent (the
 *     default on SQLite), 'validate' that they and the schema version are there (the default
 *     elsewhere, where migrations are usually the team's), or 'none'.
 */
@ConfigurationProperties("inbox")
public record InboxProperties(
        String name, Duration busyTimeout, Duration retention, CommitMode commitMode, SchemaMode schema) {

    /**
     * Checks every value that is set, as the inbox's builder would.
     *
     * @param name the inbox's name, or {@code null} for the default
     * @param busyTimeout the busy timeout, or {@code null} for the default
     * @param retention the retention, or {@code null} for the default
     * @param commitMode the commit mode, or {@code null} for the store's
     * @param schema the schema mode, or {@code null} for the database's default
     * @throws IllegalArgumentException naming the property, if a value is out of range
     */
    public InboxProperties {
        // A builder that never builds: it only runs the library's own checks, so the two cannot drift.
        applyTo(new InboxBuilder<JdbiInbox>(CommitMode.PER_CALLER, settings -> {
            throw new IllegalStateException("never built");
        }), name, busyTimeout, retention, commitMode);
    }

    /**
     * The builder with every property that is set.
     *
     * @param <I> the inbox type
     * @param builder the store's builder
     * @return a new builder
     * @throws IllegalArgumentException naming the property, if the values do not hold together
     */
    <I extends JdbiInbox> InboxBuilder<I> applyTo(InboxBuilder<I> builder) {
        return applyTo(builder, name, busyTimeout, retention, commitMode);
    }

    private static <I extends JdbiInbox> InboxBuilder<I> applyTo(
            InboxBuilder<I> builder, String name, Duration busyTimeout, Duration retention, CommitMode commitMode) {
        InboxBuilder<I> b = builder;
        b = set(b, "inbox.name", name, v -> x -> x.name(v));
        b = set(b, "inbox.busy-timeout", busyTimeout, v -> x -> x.busyTimeout(v));
        b = set(b, "inbox.retention", retention, v -> x -> x.retention(v));
        b = set(b, "inbox.commit-mode", commitMode, v -> x -> x.commitMode(v));
        try {
            b.settings();
        } catch (IllegalArgumentException e) {
            String property = e.getMessage().startsWith("retention") ? "inbox.retention" : "inbox";
            throw new IllegalArgumentException(property + ": " + e.getMessage(), e);
        }
        return b;
    }

    private static <I extends JdbiInbox, V> InboxBuilder<I> set(
            InboxBuilder<I> builder, String property, V value,
            java.util.function.Function<V, UnaryOperator<InboxBuilder<I>>> setter) {
        if (value == null) {
            return builder;
        }
        try {
            return setter.apply(value).apply(builder);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(property + ": " + e.getMessage(), e);
        }
    }

    /** {@return the inbox's name}, the library's default when unset. */
    String nameOrDefault() {
        return name == null ? InboxSettings.DEFAULT_NAME : name;
    }
}
