package dev.idempotent.inbox.examples;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The reading of a body that the fuzz tests compare the code against, written from RFC 8259 and
 * docs/PROTOCOL.md alone, without Jackson: strict UTF-8 (RFC 3629, no byte order mark), then JSON
 * text with no duplicate key in an object and nothing after the value. Slow and small on purpose,
 * so that it can be read against the documents.
 */
public final class ReferenceJson {

    /** A JSON number, kept as written, so that a test can tell {@code 7} from {@code 7.0}. */
    public record Number(String text) {
        /** True when written as an integer: no fraction and no exponent. */
        public boolean isInteger() {
            return text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0;
        }
    }

    /** JSON {@code null}, apart from Java's {@code null} (a missing member). */
    public enum Null { NULL }

    private ReferenceJson() {}

    /**
     * The value of {@code body}: a {@code Map<String, Object>}, {@code List<Object>},
     * {@code String}, {@link Number}, {@code Boolean} or {@link Null}; empty when the bytes are not
     * strict UTF-8 JSON text by the rules above.
     */
    public static Optional<Object> read(byte[] body) {
        Optional<String> text = utf8(body);
        if (text.isEmpty() || text.get().startsWith("\uFEFF")) {
            return Optional.empty();
        }
        return read(text.get());
    }

    /** The value of JSON text already decoded; empty when it is not JSON text. */
    public static Optional<Object> read(String text) {
        Parser parser = new Parser(text);
        try {
            parser.space();
            Object value = parser.value();
            parser.space();
            return parser.at == text.length() ? Optional.of(value) : Optional.empty();
        } catch (NotJson e) {
            return Optional.empty();
        }
    }

    /**
     * {@code bytes} decoded as UTF-8 by RFC 3629's table of well-formed sequences: no overlong
     * form, no encoded surrogate, nothing above U+10FFFF. Empty when they are not.
     */
    public static Optional<String> utf8(byte[] bytes) {
        StringBuilder text = new StringBuilder();
        int i = 0;
        while (i < bytes.length) {
            int b0 = bytes[i] & 0xFF;
            int length;
            int min;
            int code;
            if (b0 < 0x80) {
                length = 1; min = 0; code = b0;
            } else if (b0 >= 0xC2 && b0 <= 0xDF) {
                length = 2; min = 0x80; code = b0 & 0x1F;
            } else if (b0 >= 0xE0 && b0 <= 0xEF) {
                length = 3; min = 0x800; code = b0 & 0x0F;
            } else if (b0 >= 0xF0 && b0 <= 0xF4) {
                length = 4; min = 0x10000; code = b0 & 0x07;
            } else {
                return Optional.empty();
            }
            if (i + length > bytes.length) {
                return Optional.empty();
            }
            for (int k = 1; k < length; k++) {
                int b = bytes[i + k] & 0xFF;
                if ((b & 0xC0) != 0x80) {
                    return Optional.empty();
                }
                code = (code << 6) | (b & 0x3F);
            }
            if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
                return Optional.empty();
            }
            text.appendCodePoint(code);
            i += length;
        }
        return Optional.of(text.toString());
    }

    private static final class NotJson extends RuntimeException {
        NotJson() {
            super(null, null, false, false);
        }
    }

    private static final class Parser {
        private final String text;
        private int at;

        Parser(String text) {
            this.text = text;
        }

        void space() {
            while (at < text.length() && " \t\n\r".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
        }

        private char next() {
            if (at >= text.length()) {
                throw new NotJson();
            }
            return text.charAt(at++);
        }

        private void expect(String word) {
            if (!text.startsWith(word, at)) {
                throw new NotJson();
            }
            at += word.length();
        }

        Object value() {
            if (at >= text.length()) {
                throw new NotJson();
            }
            char c = text.charAt(at);
            switch (c) {
                case '{':
                    return object();
                case '[':
                    return array();
                case '"':
                    return string();
                case 't':
                    expect("true");
                    return Boolean.TRUE;
                case 'f':
                    expect("false");
                    return Boolean.FALSE;
                case 'n':
                    expect("null");
                    return Null.NULL;
                default:
                    return number();
            }
        }

        private Map<String, Object> object() {
            at++;
            Map<String, Object> members = new LinkedHashMap<>();
            space();
            if (at < text.length() && text.charAt(at) == '}') {
                at++;
                return members;
            }
            while (true) {
                space();
                if (at >= text.length() || text.charAt(at) != '"') {
                    throw new NotJson();
                }
                String key = string();
                space();
                if (next() != ':') {
                    throw new NotJson();
                }
                space();
                if (members.put(key, value()) != null) {
                    throw new NotJson(); // a duplicate key: two readings (no value is Java's null)
                }
                space();
                char c = next();
                if (c == '}') {
                    return members;
                }
                if (c != ',') {
                    throw new NotJson();
                }
            }
        }

        private List<Object> array() {
            at++;
            List<Object> values = new ArrayList<>();
            space();
            if (at < text.length() && text.charAt(at) == ']') {
                at++;
                return values;
            }
            while (true) {
                space();
                values.add(value());
                space();
                char c = next();
                if (c == ']') {
                    return values;
                }
                if (c != ',') {
                    throw new NotJson();
                }
            }
        }

        private String string() {
            at++;
            StringBuilder value = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') {
                    return value.toString();
                }
                if (c < 0x20) {
                    throw new NotJson();
                }
                if (c != '\\') {
                    value.append(c);
                    continue;
                }
                char e = next();
                switch (e) {
                    case '"', '\\', '/' -> value.append(e);
                    case 'b' -> value.append('\b');
                    case 'f' -> value.append('\f');
                    case 'n' -> value.append('\n');
                    case 'r' -> value.append('\r');
                    case 't' -> value.append('\t');
                    case 'u' -> {
                        if (at + 4 > text.length()) {
                            throw new NotJson();
                        }
                        String hex = text.substring(at, at + 4);
                        if (!hex.chars().allMatch(h -> (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) {
                            throw new NotJson();
                        }
                        value.append((char) Integer.parseInt(hex, 16));
                        at += 4;
                    }
                    default -> throw new NotJson();
                }
            }
        }

        private Number number() {
            int start = at;
            if (at < text.length() && text.charAt(at) == '-') {
                at++;
            }
            if (at < text.length() && text.charAt(at) == '0') {
                at++;
            } else if (digits() == 0) {
                throw new NotJson();
            }
            if (at < text.length() && text.charAt(at) == '.') {
                at++;
                if (digits() == 0) {
                    throw new NotJson();
                }
            }
            if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
                at++;
                if (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) {
                    at++;
                }
                if (digits() == 0) {
                    throw new NotJson();
                }
            }
            return new Number(text.substring(start, at));
        }

        private int digits() {
            int start = at;
            while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') {
                at++;
            }
            return at - start;
        }
    }
}
