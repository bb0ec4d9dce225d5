package dev.idempotent.inbox.examples.publisher;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvParser;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads items to publish from a CSV file, UTF-8, one item a line: {@code id,qty} or
 * {@code id,qty,origin}.
 *
 * <ul>
 *   <li>{@code id} is the shipment's id under protocol version 1; {@code qty} an integer from 1
 *       to 2147483647; {@code origin}, optional, an ISO-8601 time such as
 *       {@code 2024-05-01T12:00:00Z} (an offset such as {@code +02:00} is converted to UTC): when
 *       the business was created, sent instead of the time the item is enqueued.
 *   <li>Fields are quoted as RFC 4180 says: a field in double quotes may hold commas and line
 *       breaks, and a double quote inside it is written twice. Spaces around an unquoted field
 *       are dropped.
 *   <li>A first line {@code id,qty} or {@code id,qty,origin} (any case) is a header and skipped,
 *       and so are blank lines and lines that start with {@code #}.
 * </ul>
 */
public final class ItemsFile {

    private static final CsvMapper CSV = CsvMapper.builder()
            .enable(CsvParser.Feature.TRIM_SPACES)
            .enable(CsvParser.Feature.SKIP_EMPTY_LINES)
            .build();
    // No columns: each record comes as an array of its fields, however many there are.
    private static final CsvSchema SCHEMA = CsvSchema.emptySchema().withComments();
    private static final String QTY_RULE = "qty must be an integer from 1 to 2147483647";

    private ItemsFile() {}

    /**
     * The file's items, in file order.
     *
     * @throws Malformed naming the first line that is not an item, and why
     * @throws IOException if the file cannot be read
     */
    public static List<Outbox.Item> read(Path file) throws IOException {
        String text = decode(file, Files.readAllBytes(file));
        if (text.startsWith("\uFEFF")) {
            text = text.substring(1); // a byte order mark, as spreadsheets write it
        }
        text = blankLines(text);
        List<Outbox.Item> items = new ArrayList<>();
        // Where the record being read starts, for an error inside it: a quote left open is found
        // only at the end of the file.
        int line = 1;
        try (JsonParser parser = CSV.readerFor(List.class).with(SCHEMA).createParser(text)) {
            boolean first = true;
            while (parser.nextToken() == JsonToken.START_ARRAY) {
                List<String> fields = new ArrayList<>();
                while (parser.nextToken() == JsonToken.VALUE_STRING) {
                    if (fields.isEmpty()) {
                        // The record's first field: the array's own start carries no position.
                        line = parser.currentTokenLocation().getLineNr();
                    }
                    String field = parser.getText();
                    if (field.indexOf('"') >= 0 && !quoted(text, parser.currentTokenLocation().getCharOffset())) {
                        // Jackson keeps such a quote; RFC 4180 has none outside a quoted field.
                        throw new Malformed(file, parser.currentTokenLocation().getLineNr(),
                                "a double quote in a field that is not quoted; quote the field and write the quote twice");
                    }
                    fields.add(field);
                }
                int record = line;
                // Past the record's end, comments and blank lines: where the next one starts.
                line = parser.currentLocation().getLineNr();
                if (first) {
                    first = false;
                    if (isHeader(fields)) {
                        continue;
                    }
                }
                items.add(item(file, record, fields));
            }
        } catch (JsonProcessingException e) {
            throw new Malformed(file, line, "not valid CSV: " + e.getOriginalMessage());
        }
        return items;
    }

    /**
     * The text with its blank and comment lines turned into spaces: lines, outside a quoted
     * field, of spaces and tabs only, or whose first character other than those is {@code #}.
     * Jackson skips a line as blank only when it holds no tab, and takes {@code #} for a comment
     * only first or after spaces; as spaces the lines keep their numbers and offsets, and Jackson
     * skips them.
     */
    private static String blankLines(String text) {
        char[] chars = text.toCharArray();
        boolean inQuotes = false;
        boolean lineStart = true;
        for (int i = 0; i < chars.length; i++) {
            if (lineStart && !inQuotes) {
                int first = i;
                while (first < chars.length && (chars[first] == ' ' || chars[first] == '\t')) {
                    first++;
                }
                boolean blank = first == chars.length || chars[first] == '\n' || chars[first] == '\r';
                if (blank || chars[first] == '#') {
                    int end = i;
                    while (end < chars.length && chars[end] != '\n' && chars[end] != '\r') {
                        chars[end++] = ' ';
                    }
                    if (end == chars.length) {
                        break;
                    }
                    i = end; // the line break: the next line starts after it
                    lineStart = true;
                    if (chars[end] == '\r' && end + 1 < chars.length && chars[end + 1] == '\n') {
                        i = end + 1;
                    }
                    continue;
                }
            }
            char c = chars[i];
            lineStart = !inQuotes && (c == '\n' || c == '\r');
            if (c == '"') {
                inQuotes = !inQuotes;
            }
        }
        return new String(chars);
    }

    /** Whether the field whose token starts at {@code offset} is in double quotes: spaces dropped, it starts with one. */
    private static boolean quoted(String text, long offset) {
        int at = (int) Math.max(0, offset);
        while (at < text.length() && (text.charAt(at) == ' ' || text.charAt(at) == '\t')) {
            at++;
        }
        return at < text.length() && text.charAt(at) == '"';
    }

    private static boolean isHeader(List<String> fields) {
        List<String> names = fields.stream().map(name -> name.toLowerCase(Locale.ROOT)).toList();
        return names.equals(List.of("id", "qty")) || names.equals(List.of("id", "qty", "origin"));
    }

    private static Outbox.Item item(Path file, int line, List<String> fields) {
        if (fields.size() < 2 || fields.size() > 3) {
            throw new Malformed(file, line, "expected id,qty or id,qty,origin, found " + fields.size()
                    + (fields.size() == 1 ? " field" : " fields"));
        }
        String id = fields.get(0);
        Optional<String> idProblem = ProtocolV1.idProblem(id);
        if (idProblem.isPresent()) {
            throw new Malformed(file, line, idProblem.get());
        }
        int qty = 0;
        // Decimal digits only: Integer.parseInt would also take a sign and digits of other scripts.
        if (!fields.get(1).isEmpty() && fields.get(1).chars().allMatch(c -> c >= '0' && c <= '9')) {
            try {
                qty = Integer.parseInt(fields.get(1));
            } catch (NumberFormatException e) {
                qty = 0; // beyond an int
            }
        }
        if (qty < 1) {
            throw new Malformed(file, line, QTY_RULE + ", was '" + fields.get(1) + "'");
        }
        Optional<Instant> origin = Optional.empty();
        if (fields.size() == 3 && !fields.get(2).isEmpty()) {
            try {
                origin = Optional.of(Instant.parse(fields.get(2)));
            } catch (DateTimeParseException e) {
                // A number here most often means an id whose comma was not quoted.
                String hint = fields.get(2).chars().allMatch(Character::isDigit) ? " (quote an id that holds a comma)" : "";
                throw new Malformed(file, line, "origin must be an ISO-8601 time such as 2024-05-01T12:00:00Z, was '"
                        + fields.get(2) + "'" + hint);
            }
        }
        return new Outbox.Item(id, qty, origin);
    }

    /** The file's text, refusing bytes that are not UTF-8 with the line they are on. */
    private static String decode(Path file, byte[] bytes) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult result = decoder.decode(in, out, true);
        if (!result.isError()) {
            result = decoder.flush(out);
        }
        if (result.isError()) {
            int line = 1;
            for (int i = 0; i < in.position(); i++) {
                line += bytes[i] == '\n' ? 1 : 0;
            }
            throw new Malformed(file, line, "not UTF-8 text");
        }
        String text = out.flip().toString();
        // A control character is no part of an id, a qty or an origin, and Jackson would drop one
        // next to a field as if it were a space: refused, so that no id is read other than written.
        int line = 1;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\n' || (c == '\r' && (i + 1 == text.length() || text.charAt(i + 1) != '\n'))) {
                line++;
            } else if (Character.isISOControl(c) && c != '\t' && c != '\r') {
                throw new Malformed(file, line, "a control character (U+" + String.format("%04X", (int) c) + ")");
            }
        }
        return text;
    }

    /** A line of the items file that is not an item: its number and the reason. */
    public static final class Malformed extends IllegalArgumentException {

        private final Path file;
        private final int line;
        private final String reason;

        Malformed(Path file, int line, String reason) {
            super(file + " line " + line + ": " + reason);
            this.file = file;
            this.line = line;
            this.reason = reason;
        }

        /** The file read. */
        public Path file() {
            return file;
        }

        /** The line, counting from 1; a quoted field with line breaks counts from its record's first line. */
        public int line() {
            return line;
        }

        /** Why the line is not an item, for example {@code qty must be an integer from 1 to 2147483647, was 'seven'}. */
        public String reason() {
            return reason;
        }
    }
}
