package dev.idempotent.inbox.examples;

import java.io.File;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Turns the {@code --db} option into a {@link Warehouse}. A {@code postgresql://} or
 * {@code jdbc:postgresql://} URL opens a {@link PostgresWarehouse}, a {@code mariadb://} or
 * {@code jdbc:mariadb://} URL a {@link MariaDbWarehouse}; {@code jdbc:sqlite:FILE}, or a path with
 * a directory separator or a {@code .db}, {@code .sqlite} or {@code .sqlite3} suffix, a
 * {@link SqliteWarehouse}; anything else is refused.
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

    /** The forms {@code --db} accepts, for messages to people. */
    public static final String ACCEPTED = "a SQLite file (a path with a / or ending .db, .sqlite or .sqlite3,"
            + " or jdbc:sqlite:FILE), a postgresql:// or a mariadb:// URL";

    private static final String JDBC_SQLITE = "jdbc:sqlite:";
    private static final Pattern SCHEME = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]+:.*");

    /**
     * The SQLite file {@code location} names, or empty for a PostgreSQL or MariaDB URL. A SQLite file
     * is {@code jdbc:sqlite:FILE}, or a path that has a directory separator or ends {@code .db},
     * {@code .sqlite} or {@code .sqlite3}; a bare word ({@code mysql}, {@code pg}) is refused rather
     * than created as a file of that name. Touches nothing.
     *
     * @throws IllegalArgumentException for a blank location, a bare word, a database URL this build
     *     cannot open, or a path this file system cannot have
     */
    public static Optional<Path> sqliteFile(String location) {
        if (location.isBlank()) {
            throw new IllegalArgumentException("--db must name " + ACCEPTED);
        }
        String file = location;
        if (location.regionMatches(true, 0, JDBC_SQLITE, 0, JDBC_SQLITE.length())) {
            file = location.substring(JDBC_SQLITE.length());
            // The driver's in-memory and URI forms would give a warehouse that is gone on exit, or
            // options this command does not pass on.
            if (file.isBlank() || file.startsWith(":") || file.startsWith("file:") || file.contains("?")) {
                throw new IllegalArgumentException("--db " + location + " must name a file, as jdbc:sqlite:FILE");
            }
        } else {
            int scheme = location.indexOf("://");
            if (scheme > 0) {
                String name = location.substring(0, scheme).toLowerCase(Locale.ROOT);
                if (name.equals("postgresql") || name.equals("jdbc:postgresql") || isMariaDb(location)) {
                    return Optional.empty();
                }
                throw new IllegalArgumentException("--db " + name + "://... is not supported; give " + ACCEPTED);
            }
            if (SCHEME.matcher(location).matches()) {
                throw new IllegalArgumentException("--db " + location + " is not a database this build can open;"
                        + " give " + ACCEPTED);
            }
            if (!looksLikeAFile(location)) {
                throw new IllegalArgumentException("--db " + location + " is neither a file path nor a database URL;"
                        + " give " + ACCEPTED);
            }
        }
        try {
            return Optional.of(Path.of(file));
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("--db " + location + " is not a file path: " + e.getReason());
        }
    }

    private static boolean looksLikeAFile(String location) {
        String lower = location.toLowerCase(Locale.ROOT);
        return location.indexOf('/') >= 0 || location.indexOf(File.separatorChar) >= 0
                || lower.endsWith(".db") || lower.endsWith(".sqlite") || lower.endsWith(".sqlite3");
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
