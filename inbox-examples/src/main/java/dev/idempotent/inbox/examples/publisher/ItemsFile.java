package dev.idempotent.inbox.examples.publisher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads items to publish from a text file of {@code id,qty} lines. Blank lines, lines starting
 * with {@code #} and a first line {@code id,qty} are skipped; the last comma of a line ends the id.
 */
public final class ItemsFile {

    private ItemsFile() {}

    /**
     * The file's items, in file order.
     *
     * @throws IllegalArgumentException naming the line that is not {@code id,qty}
     * @throws IOException if the file cannot be read
     */
    public static List<Outbox.Item> read(Path file) throws IOException {
        List<Outbox.Item> items = new ArrayList<>();
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#") || (i == 0 && line.equalsIgnoreCase("id,qty"))) {
                continue;
            }
            int comma = line.lastIndexOf(',');
            if (comma < 1) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": expected id,qty");
            }
            int qty;
            try {
                qty = Integer.parseInt(line.substring(comma + 1).strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": qty must be an integer from 1 to 2147483647");
            }
            try {
                items.add(new Outbox.Item(line.substring(0, comma).strip(), qty));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": " + e.getMessage());
            }
        }
        return items;
    }
}
