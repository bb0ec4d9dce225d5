package dev.idempotent.inbox.examples;

import java.nio.file.Path;
import java.util.Locale;

/**
 * Turns the {@code --db} option into a {@link Warehouse}. A plain value is a SQLite file; a
 * {@code scheme://} value names a database server, and this is the one place where support for
 * one (PostgreSQL, say) gets added.
 */
public final class WarehouseDatabase {

    private WarehouseDatabase() {}

    /**
     * Opens the warehouse that {@code location} names.
     *
     * @throws IllegalArgumentException for a database URL this build cannot open
     */
    public static Warehouse open(String location) {
        if (location.isBlank()) {
            throw new IllegalArgumentException("--db must name a SQLite file");
        }
        int scheme = location.indexOf("://");
        if (scheme > 0) {
            String name = location.substring(0, scheme).toLowerCase(Locale.ROOT);
            throw new IllegalArgumentException("--db " + name + "://... is not supported yet; give a SQLite file path");
        }
        return Warehouse.open(Path.of(location));
    }
}
