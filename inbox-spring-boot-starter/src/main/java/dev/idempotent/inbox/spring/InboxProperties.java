package dev.idempotent.inbox.spring;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code inbox.*} properties: the settings of the inbox the auto-configuration builds over the
 * application's {@code DataSource}, or of each of several named ones ({@code inbox.instances.<key>.*}).
 * Checked when they are bound, so a bad value fails start-up with a message that names the
 * property ({@code inbox.busy-timeout: busyTimeout must be from 0 to 1 hour, was PT2H}); an unset
 * one keeps the library's default.
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
 * @param schema What the inbox does about its tables at start-up, after Spring Boot's Flyway and
 *     Liquibase have run: 'create' the tables or run the schema steps they lack (the default on
 *     SQLite), 'validate' that they are there and up to date (the default elsewhere, where
 *     migrations are usually the team's), or 'none'.
 * @param tables Where the inbox's tables are: their name prefix ('inbox_' by default) and the
 *     schema (PostgreSQL) or database (MariaDB) they live in.
 * @param maxResultBytes The largest encoded result a SpringInbox's storingResults view stores, in
 *     bytes: 65536 by default, at most 67108864; a larger result fails the call and its transaction
 *     rolls back.
 * @param instances Several inboxes instead of one, by key: each has the same settings as the single
 *     inbox (name, busy-timeout, retention, commit-mode, schema, tables, max-result-bytes), its name
 *     defaulting to its key, and becomes the beans '(key)Inbox' and '(key)SpringInbox'. The single
 *     inbox's settings are then not allowed beside them.
 */
@ConfigurationProperties("inbox")
public record InboxProperties(
        String name, Duration busyTimeout, Duration retention, CommitMode commitMode, SchemaMode schema,
        Tables tables, Integer maxResultBytes, Map<String, Instance> instances) {

    /**
     * Checks every value that is set, as the inbox's builder would, and that the instances' names
     * are distinct.
     *
     * @param name the inbox's name, or {@code null} for the default
     * @param busyTimeout the busy timeout, or {@code null} for the default
     * @param retention the retention, or {@code null} for the default
     * @param commitMode the commit mode, or {@code null} for the store's
     * @param schema the schema mode, or {@code null} for the database's default
     * @param tables the table names, or {@code null} for the defaults
     * @param maxResultBytes the largest stored result, or {@code null} for the default
     * @param instances the named inboxes by key, or {@code null} or empty for the single inbox
     * @throws IllegalArgumentException naming the property, if a value is out of range, if two
     *     instances have one name, or if a single inbox's setting is set beside instances
     */
    public InboxProperties {
        instances = instances == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(instances));
        check("inbox", name, busyTimeout, retention, commitMode, tables, maxResultBytes);
        if (!instances.isEmpty()) {
            refuseBesideInstances("name", name);
            refuseBesideInstances("busy-timeout", busyTimeout);
            refuseBesideInstances("retention", retention);
            refuseBesideInstances("commit-mode", commitMode);
            refuseBesideInstances("schema", schema);
            refuseBesideInstances("tables", tables);
            refuseBesideInstances("max-result-bytes", maxResultBytes);
        }
        Map<String, String> keyByName = new LinkedHashMap<>();
        instances.forEach((key, instance) -> {
            String prefix = "inbox.instances." + key;
            Instance settings = instance == null ? new Instance(null, null, null, null, null, null, null) : instance;
            check(prefix, settings.nameOr(key), settings.busyTimeout(), settings.retention(), settings.commitMode(),
                    settings.tables(), settings.maxResultBytes());
            String other = keyByName.putIfAbsent(settings.nameOr(key), key);
            if (other != null) {
                throw new IllegalArgumentException(prefix + ".name: the inbox name '" + settings.nameOr(key)
                        + "' is inbox.instances." + other + "'s too; each inbox needs a name of its own");
            }
        });
    }

    /**
     * The settings of one of several inboxes, {@code inbox.instances.<key>.*}: as those of the
     * single inbox, checked by {@link InboxProperties} under the instance's full property names.
     *
     * @param name The inbox's name, one per consumer sharing a database; its key when unset.
     * @param busyTimeout How long a call waits for the write lock, or for a concurrent claim of the
     *     same id, before it fails as busy; at most 1h.
     * @param retention How long ids are remembered before a purge may delete them.
     * @param commitMode How the inbox's own transactions are formed: 'group' or 'per-caller'.
     * @param schema What the inbox does about its tables at start-up: 'create', 'validate' or 'none'.
     * @param tables Where this inbox's tables are: their name prefix and schema or database.
     * @param maxResultBytes The largest encoded result this inbox's storingResults view stores, in
     *     bytes.
     */
    public record Instance(String name, Duration busyTimeout, Duration retention, CommitMode commitMode,
            SchemaMode schema, Tables tables, Integer maxResultBytes) {

        /** {@return the name, or {@code key} when unset} */
        String nameOr(String key) {
            return name == null ? key : name;
        }
    }

    /**
     * Where an inbox's tables are, {@code inbox.tables.*} or {@code inbox.instances.<key>.tables.*}:
     * as {@link InboxTables}, whose checks the values pass when they are bound.
     *
     * @param prefix The start of every table and index name of the inbox: lower-case letters, digits
     *     and '_', at most 32 bytes; 'inbox_' by default, so 'orders_' gives orders_message and so on.
     * @param schema The PostgreSQL schema or MariaDB database the tables are in, which must exist; the
     *     connection's own by default. Not on SQLite.
     */
    public record Tables(String prefix, String schema) {

        /** {@return the table names these give}, the defaults for what is unset */
        InboxTables toInboxTables() {
            InboxTables tables = prefix == null ? InboxTables.defaults() : InboxTables.prefix(prefix);
            return schema == null ? tables : tables.inSchema(schema);
        }
    }

    private static void refuseBesideInstances(String property, Object value) {
        if (value != null) {
            throw new IllegalArgumentException("inbox." + property + ": set beside inbox.instances, where each inbox"
                    + " has settings of its own; set inbox.instances.<key>." + property + " instead");
        }
    }

    private static void check(String prefix, String name, Duration busyTimeout, Duration retention, CommitMode commitMode,
            Tables tables, Integer maxResultBytes) {
        // A builder that never builds: it only runs the library's own checks, so the two cannot drift.
        applyTo(new InboxBuilder<JdbiInbox>(CommitMode.PER_CALLER, settings -> {
            throw new IllegalStateException("never built");
        }), prefix, name, busyTimeout, retention, commitMode, tables, maxResultBytes);
    }

    /**
     * The builder with every single-inbox property that is set.
     *
     * @param <I> the inbox type
     * @param builder the store's builder
     * @return a new builder
     * @throws IllegalArgumentException naming the property, if the values do not hold together
     */
    <I extends JdbiInbox> InboxBuilder<I> applyTo(InboxBuilder<I> builder) {
        return applyTo(builder, "inbox", name, busyTimeout, retention, commitMode, tables, maxResultBytes);
    }

    /**
     * The builder with every property of the instance {@code key} that is set, its name defaulting
     * to the key.
     *
     * @param <I> the inbox type
     * @param builder the store's builder
     * @param key the instance's key in {@link #instances()}
     * @return a new builder
     * @throws IllegalArgumentException naming the property, if the values do not hold together
     */
    static <I extends JdbiInbox> InboxBuilder<I> applyTo(InboxBuilder<I> builder, String key, Instance instance) {
        return applyTo(builder, "inbox.instances." + key, instance.nameOr(key), instance.busyTimeout(),
                instance.retention(), instance.commitMode(), instance.tables(), instance.maxResultBytes());
    }

    private static <I extends JdbiInbox> InboxBuilder<I> applyTo(InboxBuilder<I> builder, String prefix,
            String name, Duration busyTimeout, Duration retention, CommitMode commitMode, Tables tables,
            Integer maxResultBytes) {
        InboxBuilder<I> b = builder;
        b = set(b, prefix + ".name", name, v -> x -> x.name(v));
        b = set(b, prefix + ".busy-timeout", busyTimeout, v -> x -> x.busyTimeout(v));
        b = set(b, prefix + ".retention", retention, v -> x -> x.retention(v));
        b = set(b, prefix + ".commit-mode", commitMode, v -> x -> x.commitMode(v));
        b = set(b, prefix + ".max-result-bytes", maxResultBytes, v -> x -> x.maxResultBytes(v));
        if (tables != null) {
            // Each name checked on its own, so that the message names the property that is wrong.
            set(b, prefix + ".tables.prefix", tables.prefix(), v -> x -> x.tables(InboxTables.prefix(v)));
            set(b, prefix + ".tables.schema", tables.schema(), v -> x -> x.tables(InboxTables.defaults().inSchema(v)));
            b = b.tables(tables.toInboxTables());
        }
        try {
            b.settings();
        } catch (IllegalArgumentException e) {
            String property = e.getMessage().startsWith("retention") ? prefix + ".retention" : prefix;
            throw new IllegalArgumentException(property + ": " + e.getMessage(), e);
        }
        return b;
    }

    private static <I extends JdbiInbox, V> InboxBuilder<I> set(
            InboxBuilder<I> builder, String property, V value, Function<V, UnaryOperator<InboxBuilder<I>>> setter) {
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
