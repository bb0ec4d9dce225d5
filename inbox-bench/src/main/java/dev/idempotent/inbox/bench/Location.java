package dev.idempotent.inbox.bench;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a benchmark puts its files.
 *
 * <p>{@link #DISK} is the temp directory ({@code -Dinbox.bench.disk} overrides it), on the disk
 * whose sync rate bounds every durable commit. {@link #TMPFS} is {@code /dev/shm} ({@code
 * -Dinbox.bench.tmpfs} overrides it), where {@code fsync} returns at once: the inbox fixes
 * {@code synchronous=FULL} on its own connection, so a file on tmpfs is how the CPU-bound case is
 * measured.
 */
public enum Location {
    DISK("inbox.bench.disk", System.getProperty("java.io.tmpdir")),
    TMPFS("inbox.bench.tmpfs", "/dev/shm");

    private final String property;
    private final String fallback;

    Location(String property, String fallback) {
        this.property = property;
        this.fallback = fallback;
    }

    /** The directory benchmark files are created under. */
    public Path parent() {
        Path parent = Path.of(System.getProperty(property, fallback));
        if (!Files.isDirectory(parent)) {
            throw new IllegalStateException(name() + " directory " + parent + " does not exist; set -D" + property);
        }
        return parent;
    }
}
