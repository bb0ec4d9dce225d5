package dev.idempotent.inbox.examples;

import java.nio.file.Path;
import java.util.Locale;

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
        if (location.isBlank()) {
            throw new IllegalArgumentException("--db must name a SQLite file or a postgresql:// URL");
        }
        int scheme = location.indexOf("://");
        if (scheme > 0) {
            String name = location.substring(0, scheme).toLowerCase(Locale.ROOT);
            if (name.equals("postgresql") || name.equals("jdbc:postgresql")) {
                return PostgresWarehouse.open(location, options::applyTo);
            }
            throw new IllegalArgumentException("--db " + name + "://... is not supported; give a SQLite file path"
                    + " or a postgresql:// URL");
        }
        return SqliteWarehouse.open(Path.of(location), options::applyTo);
    }
}
