package dev.idempotent.inbox.examples.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.idempotent.inbox.examples.ReferenceJson;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The CSV reader of {@code publish --file} against the items file format of the README, read
 * independently by {@link #formatReading}: the reader returns exactly the items the format
 * describes, in file order, and refuses every other file with {@link ItemsFile.Malformed} naming
 * a line of the file, never with another exception.
 */
class ItemsFileFuzzTest {

    private static Path file;

    @BeforeAll
    static void createFile() throws IOException {
        file = Files.createTempFile("items-fuzz", ".csv");
    }

    @AfterAll
    static void deleteFile() throws IOException {
        Files.deleteIfExists(file);
    }

    @FuzzTest
    // No line breaks or tabs in entries: the fuzzer's dictionary format takes one entry a line.
    @DictionaryEntries({"id,qty,origin", "\"\"", "#", "2024-05-01T12:00:00Z", "+02:00", "2147483647", "\uFEFF"})
    void readerReturnsExactlyTheItemsTheFormatDescribes(byte[] bytes) throws IOException {
        Files.write(file, bytes);
        Optional<List<Outbox.Item>> expected = formatReading(bytes);
        List<Outbox.Item> items;
        try {
            items = ItemsFile.read(file);
        } catch (ItemsFile.Malformed malformed) {
            if (expected.isPresent()) {
                fail("refused a file the format accepts (" + malformed.reason() + "): " + expected.get());
            }
            long lines = 1 + countLineBreaks(bytes);
            assertTrue(malformed.line() >= 1 && malformed.line() <= lines,
                    "line " + malformed.line() + " of a file of " + lines + " lines");
            return;
        }
        assertEquals(expected, Optional.of(items), "the items the format reads in this file");
    }

    private static long countLineBreaks(byte[] bytes) {
        long breaks = 0;
        for (int i = 0; i < bytes.length; i++) {
            // CR LF is one line break, and so is a CR or an LF alone
            if (bytes[i] == '\n' || (bytes[i] == '\r' && (i + 1 == bytes.length || bytes[i + 1] != '\n'))) {
                breaks++;
            }
        }
        return breaks;
    }

    /** The items the README's format reads in {@code bytes}, or empty when it says to refuse the file. */
    static Optional<List<Outbox.Item>> formatReading(byte[] bytes) {
        Optional<String> decoded = ReferenceJson.utf8(bytes);
        if (decoded.isEmpty()) {
            return Optional.empty();
        }
        String text = decoded.get();
        if (text.startsWith("\uFEFF")) {
            text = text.substring(1); // a byte order mark, as spreadsheets write it
        }
        // Control characters have no place in an id, a qty or an origin; a tab is a space.
        if (text.chars().anyMatch(c -> Character.isISOControl(c) && c != '\t' && c != '\r' && c != '\n')) {
            return Optional.empty();
        }
        Optional<List<List<String>>> records = records(text);
        if (records.isEmpty()) {
            return Optional.empty();
        }
        List<Outbox.Item> items = new ArrayList<>();
        boolean first = true;
        for (List<String> fields : records.get()) {
            if (first) {
                first = false;
                List<String> names = fields.stream().map(f -> f.toLowerCase(Locale.ROOT)).toList();
                if (names.equals(List.of("id", "qty")) || names.equals(List.of("id", "qty", "origin"))) {
                    continue;
                }
            }
            Optional<Outbox.Item> item = item(fields);
            if (item.isEmpty()) {
                return Optional.empty();
            }
            items.add(item.get());
        }
        return Optional.of(items);
    }

    private static Optional<Outbox.Item> item(List<String> fields) {
        if (fields.size() < 2 || fields.size() > 3) {
            return Optional.empty();
        }
        String id = fields.get(0);
        if (ProtocolV1.idProblem(id).isPresent()) {
            return Optional.empty();
        }
        // "an integer from 1 to 2147483647": decimal digits, nothing else
        String qty = fields.get(1);
        if (qty.isEmpty() || !qty.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.empty();
        }
        BigInteger value = new BigInteger(qty);
        if (value.signum() < 1 || value.compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
            return Optional.empty();
        }
        Optional<Instant> origin = Optional.empty();
        if (fields.size() == 3 && !fields.get(2).isEmpty()) {
            try {
                origin = Optional.of(Instant.parse(fields.get(2))); // ISO-8601, an offset converted to UTC
            } catch (DateTimeParseException e) {
                return Optional.empty();
            }
        }
        return Optional.of(new Outbox.Item(id, value.intValue(), origin));
    }

    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t';
    }

    private static boolean isLineEnd(String text, int at) {
        return at >= text.length() || text.charAt(at) == '\n' || text.charAt(at) == '\r';
    }

    /** {@code at} moved past the line break at {@code at}, if there is one. */
    private static int pastLineEnd(String text, int at) {
        if (at < text.length() && text.charAt(at) == '\r') {
            at++;
        }
        if (at < text.length() && text.charAt(at) == '\n') {
            at++;
        }
        return at;
    }

    /**
     * The records of RFC 4180 text: fields separated by commas, a record per line, a field in
     * double quotes may hold commas, line breaks and doubled quotes; spaces around a field are
     * dropped; a quote anywhere else is broken quoting. Blank lines and lines starting with
     * {@code #} are no records.
     */
    static Optional<List<List<String>>> records(String text) {
        List<List<String>> records = new ArrayList<>();
        int at = 0;
        while (at < text.length()) {
            int lineStart = at;
            while (at < text.length() && isSpace(text.charAt(at))) {
                at++;
            }
            if (isLineEnd(text, at) || text.charAt(at) == '#') {
                while (!isLineEnd(text, at)) {
                    at++;
                }
                at = pastLineEnd(text, at);
                continue;
            }
            at = lineStart;
            List<String> fields = new ArrayList<>();
            while (true) {
                while (at < text.length() && isSpace(text.charAt(at))) {
                    at++;
                }
                StringBuilder field = new StringBuilder();
                if (at < text.length() && text.charAt(at) == '"') {
                    at++;
                    while (true) {
                        if (at >= text.length()) {
                            return Optional.empty(); // a quote left open
                        }
                        char c = text.charAt(at++);
                        if (c == '"') {
                            if (at < text.length() && text.charAt(at) == '"') {
                                field.append('"');
                                at++;
                            } else {
                                break;
                            }
                        } else {
                            field.append(c);
                        }
                    }
                    while (at < text.length() && isSpace(text.charAt(at))) {
                        at++;
                    }
                    if (!isLineEnd(text, at) && text.charAt(at) != ',') {
                        return Optional.empty(); // text after a closing quote
                    }
                    fields.add(field.toString());
                } else {
                    while (!isLineEnd(text, at) && text.charAt(at) != ',') {
                        if (text.charAt(at) == '"') {
                            return Optional.empty(); // a quote inside an unquoted field
                        }
                        field.append(text.charAt(at++));
                    }
                    fields.add(trimSpaces(field.toString()));
                }
                if (at < text.length() && text.charAt(at) == ',') {
                    at++;
                    continue;
                }
                at = pastLineEnd(text, at);
                break;
            }
            records.add(fields);
        }
        return Optional.of(records);
    }

    private static String trimSpaces(String field) {
        int end = field.length();
        while (end > 0 && isSpace(field.charAt(end - 1))) {
            end--;
        }
        return field.substring(0, end);
    }
}
