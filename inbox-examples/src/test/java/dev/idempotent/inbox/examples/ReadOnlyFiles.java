package dev.idempotent.inbox.examples;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * Makes files read-only for this process: by their permission bits, or, for root (who writes
 * through those), with the immutable attribute, which {@link #close()} takes away again so that
 * {@code @TempDir} can delete them.
 */
final class ReadOnlyFiles implements AutoCloseable {

    private final List<Path> immutable = new ArrayList<>();

    /** Makes {@code file} read-only, or aborts the test if this machine cannot. */
    void make(Path file) throws IOException, InterruptedException {
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r--r--"));
        if (writable(file)) {
            try {
                if (new ProcessBuilder("chattr", "+i", file.toString()).inheritIO().start().waitFor() == 0) {
                    immutable.add(file);
                }
            } catch (IOException e) {
                // No chattr here: the assumption below decides.
            }
        }
        Assumptions.assumeFalse(writable(file), "cannot make " + file + " read-only for this user");
    }

    private static boolean writable(Path file) {
        try (OutputStream stream = Files.newOutputStream(file, StandardOpenOption.APPEND)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        for (Path file : immutable) {
            new ProcessBuilder("chattr", "-i", file.toString()).inheritIO().start().waitFor();
        }
        immutable.clear();
    }
}
