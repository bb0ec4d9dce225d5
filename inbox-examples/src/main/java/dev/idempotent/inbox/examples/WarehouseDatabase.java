package dev.idempotent.inbox.examples;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * Turns the {@code --db} option into a {@link Warehouse}. A {@code postgresql://} or
 * {@code jdbc:postgresql://} URL opens a {@link PostgresWarehouse}, a {@code mariadb://} or
 * {@code jdbc:mariadb://} URL a {@link MariaDbWarehouse}; any other {@code scheme://} value is
 * refused; everything else is a SQLite file.
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
        if (isMariaDb(location)) {
            return MariaDbWarehouse.open(location, options::applyTo);
        }
        return PostgresWarehouse.open(location, options::applyTo);
    }

    /**
     * The SQLite file {@code location} names, or empty for a PostgreSQL or MariaDB URL. Touches nothing.
     *
     * @throws IllegalArgumentException for a blank location, a database URL this build cannot
     *     open, or a path this file system cannot have
     */
    public static Optional<Path> sqliteFile(String location) {
        if (location.isBlank()) {
            throw new IllegalArgumentException("--db must name a SQLite file, a postgresql:// or a mariadb:// URL");
        }
        int scheme = location.indexOf("://");
        if (scheme > 0) {
            String name = location.substring(0, scheme).toLowerCase(Locale.ROOT);
            if (name.equals("postgresql") || name.equals("jdbc:postgresql") || isMariaDb(location)) {
                return Optional.empty();
            }
            throw new IllegalArgumentException("--db " + name + "://... is not supported; give a SQLite file path,"
                    + " a postgresql:// or a mariadb:// URL");
        }
        try {
            return Optional.of(Path.of(location));
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("--db " + location + " is not a file path: " + e.getReason());
        }
    }

    private static boolean isMariaDb(String location) {
        int scheme = location.indexOf("://");
        String name = scheme < 0 ? "" : location.substring(0, scheme).toLowerCase(Locale.ROOT);
        return name.equals("mariadb") || name.equals("jdbc:mariadb");
    }

    /**
     * {@code location} as it may be shown to an operator: a file path as given, a URL without its
     * user, password and parameters ({@code postgresql://HOST:PORT/DB}, {@code mariadb://HOST:PORT/DB}).
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
