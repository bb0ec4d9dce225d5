package dev.idempotent.inbox.examples;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * Turns the {@code --db} option into a {@link Warehouse}. A {@code postgresql://} or
 * {@code jdbc:postgresql://} URL opens a {@link PostgresWarehouse}; any other {@code scheme://}
 * value is refused; everything else is a SQLite file.
 */
public final class WarehouseDatabase {

    private WarehouseDatabase() {}

    /**
     * Opens the warehouse that {@code location} names, with the library's default settings.
     *
     * @throws IllegalArgumentException for a database URL this build cannot open
     */
    public static Warehouse open(String location) {
        return open(location, WarehouseOptions.defaults());
    }

    /**
     * Opens the warehouse that {@code location} names, its inbox built with {@code options}.
     *
     * @throws IllegalArgumentException for a database URL this build cannot open, or settings the
     *     inbox's builder refuses (a retention shorter than the senders' resend age, say)
     * @throws dev.idempotent.inbox.InboxStorageException if the database cannot be reached or
     *     holds a newer schema
     */
    public static Warehouse open(String location, WarehouseOptions options) {
        Optional<Path> file = sqliteFile(location);
        if (file.isPresent()) {
            return SqliteWarehouse.open(file.get(), options::applyTo);
        }
        return PostgresWarehouse.open(location, options::applyTo);
    }

    /**
     * The SQLite file {@code location} names, or empty for a PostgreSQL URL. Touches nothing.
     *
     * @throws IllegalArgumentException for a blank location, a database URL this build cannot
     *     open, or a path this file system cannot have
     */
    public static Optional<Path> sqliteFile(String location) {
        if (location.isBlank()) {
            throw new IllegalArgumentException("--db must name a SQLite file or a postgresql:// URL");
        }
        int scheme = location.indexOf("://");
        if (scheme > 0) {
            String name = location.substring(0, scheme).toLowerCase(Locale.ROOT);
            if (name.equals("postgresql") || name.equals("jdbc:postgresql")) {
                return Optional.empty();
            }
            throw new IllegalArgumentException("--db " + name + "://... is not supported; give a SQLite file path"
                    + " or a postgresql:// URL");
        }
        try {
            return Optional.of(Path.of(location));
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("--db " + location + " is not a file path: " + e.getReason());
        }
    }

    /**
     * {@code location} as it may be shown to an operator: a file path as given, a URL without its
     * user, password and parameters ({@code postgresql://HOST:PORT/DB}).
     */
    public static String shown(String location) {
        int scheme = location.indexOf("://");
        if (scheme < 0) {
            return location;
        }
        String rest = location.substring(scheme + 3);
        int query = rest.indexOf('?');
        if (query >= 0) {
            rest = rest.substring(0, query);
        }
        int slash = rest.indexOf('/');
        int user = rest.lastIndexOf('@', slash < 0 ? rest.length() - 1 : slash);
        if (user >= 0) {
            rest = rest.substring(user + 1);
        }
        return location.substring(0, scheme + 3) + rest;
    }
}
