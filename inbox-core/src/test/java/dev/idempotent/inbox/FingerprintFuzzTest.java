package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The content fingerprint: equal contents give equal fingerprints and different contents
 * different ones. For JSON, "equal" is the reference below: two texts are the same content
 * exactly when they denote the same JSON value (objects as unordered maps, numbers by their
 * mathematical value, strings as code points), whatever their spelling.
 *
 * <p>Without {@code JAZZER_FUZZ} these replay the committed inputs under
 * {@code src/test/resources/dev/idempotent/inbox/FingerprintFuzzTestInputs/}; {@code scripts/fuzz}
 * fuzzes them.
 */
class FingerprintFuzzTest {

    /** A JSON value as the reference sees it; records compare by value, maps ignore key order. */
    sealed interface Value permits Null, Bool, Num, Str, Arr, Obj {}

    record Null() implements Value {}

    record Bool(boolean value) implements Value {}

    /** A number by its value: {@code 1e2}, {@code 100} and {@code 100.0} are one number, and so are 0 and -0. */
    record Num(BigDecimal value) implements Value {
        Num {
            value = value.signum() == 0 ? BigDecimal.ZERO : value.stripTrailingZeros();
        }
    }

    record Str(String value) implements Value {}

    record Arr(List<Value> values) implements Value {}

    record Obj(Map<String, Value> members) implements Value {}

    private static final int MAX_DEPTH = 6;

    /**
     * Two texts of one generated value, spelled differently, have one fingerprint; the value
     * changed in one place has another; a second generated value has the first one's fingerprint
     * exactly when the two are equal. Every text written here is one the inbox must accept.
     */
    @FuzzTest
    void equalJsonValuesHaveEqualFingerprintsAndDifferentOnesDifferent(FuzzedDataProvider data) {
        Value value = value(data, 0);
        String one = write(value, data);
        String other = write(value, data);
        Content first = accepted(one);
        assertEquals(first.fingerprint(), accepted(other).fingerprint(), "two spellings of one value");
        assertEquals(first.fingerprint(), accepted(one.getBytes(StandardCharsets.UTF_8)).fingerprint(),
                "the same text as a String and as UTF-8 bytes");
        // The canonical form is a fixed point: canonicalising it again changes nothing.
        assertArrayEquals(first.bytes(), accepted(new String(first.bytes(), StandardCharsets.UTF_8)).bytes());

        Value changed = change(value, data);
        assertNotEquals(value, changed);
        assertNotEquals(first.fingerprint(), accepted(write(changed, data)).fingerprint(), "a changed value");

        Value second = value(data, 0);
        assertEquals(value.equals(second), first.fingerprint().equals(accepted(write(second, data)).fingerprint()),
                "a second value has the first one's fingerprint exactly when it is equal");
    }

    /**
     * Any bytes are either refused as {@link InvalidMessageException.Problem#CONTENT_MALFORMED}
     * or taken to a canonical form that is its own canonical form; never another exception (a
     * {@code StackOverflowError}, a {@code NumberFormatException} from the canonicaliser).
     */
    @FuzzTest
    void anyBytesAreRefusedOrCanonicalised(byte[] bytes) {
        Content content;
        try {
            content = Content.json(bytes);
        } catch (InvalidMessageException e) {
            assertEquals(InvalidMessageException.Problem.CONTENT_MALFORMED, e.problem());
            return;
        }
        assertEquals(ContentType.JSON, content.type());
        assertArrayEquals(content.bytes(), Content.json(content.bytes()).bytes(), "the canonical form is a fixed point");
        assertEquals(content, Content.json(new String(bytes, StandardCharsets.UTF_8)), "bytes and text agree");
    }

    /**
     * The other content kinds: two contents have one fingerprint exactly when they have the same
     * type and the same bytes, across kinds too ({@code of("7")} is not {@code ofBytes("7")}).
     */
    @FuzzTest
    void typedContentsHaveOneFingerprintExactlyWhenEqual(FuzzedDataProvider data) {
        List<Content> contents = new ArrayList<>();
        List<String> expected = new ArrayList<>(); // the reference: type name, version and bytes, as text
        while (data.remainingBytes() > 0 && contents.size() < 6) {
            switch (data.consumeInt(0, 3)) {
                case 0 -> {
                    String text = data.consumeString(40);
                    if (!wellFormed(text)) {
                        assertThrows(IllegalArgumentException.class, () -> Content.of(text));
                        continue;
                    }
                    contents.add(Content.of(text));
                    expected.add("inbox.utf8@1:" + Arrays.toString(text.getBytes(StandardCharsets.UTF_8)));
                }
                case 1 -> {
                    byte[] bytes = data.consumeBytes(40);
                    contents.add(Content.ofBytes(bytes));
                    expected.add("inbox.bytes@1:" + Arrays.toString(bytes));
                }
                case 2 -> {
                    long number = data.consumeLong();
                    contents.add(Content.of(number));
                    expected.add("inbox.int64@1:" + Arrays.toString(java.nio.ByteBuffer.allocate(8).putLong(number).array()));
                }
                default -> {
                    String schema = data.pickValue(new String[] {"shipment", "shipmen", "shipment@1", "s", "t"});
                    int version = data.consumeInt(1, 3);
                    byte[] bytes = data.consumeBytes(20);
                    contents.add(Content.structured(schema, version, bytes));
                    expected.add(schema + "@" + version + ":" + Arrays.toString(bytes));
                }
            }
        }
        for (int i = 0; i < contents.size(); i++) {
            for (int j = 0; j < contents.size(); j++) {
                assertEquals(expected.get(i).equals(expected.get(j)),
                        contents.get(i).fingerprint().equals(contents.get(j).fingerprint()),
                        expected.get(i) + " against " + expected.get(j));
            }
        }
    }

    private static boolean wellFormed(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    private static Content accepted(String json) {
        try {
            return Content.json(json);
        } catch (InvalidMessageException e) {
            return fail("refused JSON text the reference writes: " + e.getMessage() + ": " + json);
        }
    }

    private static Content accepted(byte[] json) {
        try {
            return Content.json(json);
        } catch (InvalidMessageException e) {
            return fail("refused JSON bytes the reference writes: " + e.getMessage());
        }
    }

    // ---- the reference's values, from the fuzzer's bytes

    private static Value value(FuzzedDataProvider data, int depth) {
        int kind = data.consumeInt(0, depth >= MAX_DEPTH ? 3 : 5);
        switch (kind) {
            case 0:
                return new Null();
            case 1:
                return new Bool(data.consumeBoolean());
            case 2:
                return number(data);
            case 3:
                return new Str(string(data));
            case 4: {
                List<Value> values = new ArrayList<>();
                int size = data.consumeInt(0, 4);
                for (int i = 0; i < size; i++) {
                    values.add(value(data, depth + 1));
                }
                return new Arr(values);
            }
            default: {
                Map<String, Value> members = new LinkedHashMap<>();
                int size = data.consumeInt(0, 4);
                for (int i = 0; i < size; i++) {
                    members.put(string(data), value(data, depth + 1));
                }
                return new Obj(members);
            }
        }
    }

    /**
     * At most 15 significant digits and a modest exponent: every such decimal is the shortest
     * form of its nearest double, so the inbox must take it as written. Longer ones it may
     * refuse, which {@link #anyBytesAreRefusedOrCanonicalised} covers.
     */
    private static Num number(FuzzedDataProvider data) {
        long unscaled = data.consumeLong(-999_999_999_999_999L, 999_999_999_999_999L);
        int scale = data.consumeInt(-20, 20);
        return new Num(BigDecimal.valueOf(unscaled, scale));
    }

    /** Code points of every plane except surrogates, which have no place in a JSON value's string. */
    private static String string(FuzzedDataProvider data) {
        StringBuilder text = new StringBuilder();
        int length = data.consumeInt(0, 6);
        for (int i = 0; i < length; i++) {
            int codePoint = switch (data.consumeInt(0, 3)) {
                case 0 -> data.consumeInt(0, 0x7F);
                case 1 -> data.consumeInt(0x80, 0xD7FF);
                case 2 -> data.consumeInt(0xE000, 0xFFFF);
                default -> data.consumeInt(0x10000, 0x10FFFF);
            };
            text.appendCodePoint(codePoint);
        }
        return text.toString();
    }

    /** A value that differs from {@code value} in one place the fuzzer picks. */
    private static Value change(Value value, FuzzedDataProvider data) {
        if (value instanceof Obj obj && !obj.members().isEmpty() && data.consumeBoolean()) {
            List<String> keys = new ArrayList<>(obj.members().keySet());
            String key = keys.get(data.consumeInt(0, keys.size() - 1));
            Map<String, Value> members = new LinkedHashMap<>(obj.members());
            switch (data.consumeInt(0, 2)) {
                case 0 -> members.put(key, change(members.get(key), data));
                case 1 -> members.remove(key);
                default -> members.put(key + "\u0000", new Null()); // a key the object does not have yet
            }
            if (members.containsKey(key + "\u0000") && obj.members().containsKey(key + "\u0000")) {
                return new Arr(List.of(value));
            }
            return new Obj(members);
        }
        if (value instanceof Arr arr && !arr.values().isEmpty() && data.consumeBoolean()) {
            List<Value> values = new ArrayList<>(arr.values());
            int index = data.consumeInt(0, values.size() - 1);
            values.set(index, change(values.get(index), data));
            return new Arr(values);
        }
        if (value instanceof Bool bool) {
            return new Bool(!bool.value());
        }
        if (value instanceof Str str && data.consumeBoolean()) {
            return new Str(str.value() + "x");
        }
        if (value instanceof Num num && data.consumeBoolean()) {
            return new Str(num.value().toString()); // the same digits as a string
        }
        return new Arr(List.of(value)); // never equal to what it wraps
    }

    // ---- JSON text of a value, spelled as the fuzzer picks

    private static String write(Value value, FuzzedDataProvider data) {
        StringBuilder text = new StringBuilder();
        space(text, data);
        write(value, data, text);
        space(text, data);
        return text.toString();
    }

    private static void space(StringBuilder text, FuzzedDataProvider data) {
        int count = data.remainingBytes() > 0 ? data.consumeInt(0, 2) : 0;
        for (int i = 0; i < count; i++) {
            text.append(" \t\n\r".charAt(data.consumeInt(0, 3)));
        }
    }

    private static void write(Value value, FuzzedDataProvider data, StringBuilder text) {
        if (value instanceof Null) {
            text.append("null");
        } else if (value instanceof Bool bool) {
            text.append(bool.value());
        } else if (value instanceof Num num) {
            text.append(spell(num.value(), data));
        } else if (value instanceof Str str) {
            quote(str.value(), data, text);
        } else if (value instanceof Arr arr) {
            text.append('[');
            for (int i = 0; i < arr.values().size(); i++) {
                if (i > 0) {
                    text.append(',');
                }
                space(text, data);
                write(arr.values().get(i), data, text);
                space(text, data);
            }
            text.append(']');
        } else if (value instanceof Obj obj) {
            List<Map.Entry<String, Value>> members = new ArrayList<>(obj.members().entrySet());
            if (data.consumeBoolean()) {
                Collections.reverse(members);
            }
            if (members.size() > 1 && data.consumeBoolean()) {
                Collections.rotate(members, data.consumeInt(1, members.size() - 1));
            }
            text.append('{');
            for (int i = 0; i < members.size(); i++) {
                if (i > 0) {
                    text.append(',');
                }
                space(text, data);
                quote(members.get(i).getKey(), data, text);
                space(text, data);
                text.append(':');
                space(text, data);
                write(members.get(i).getValue(), data, text);
                space(text, data);
            }
            text.append('}');
        }
    }

    /** One of the many spellings of a number: plain, with trailing zeros, with an exponent, -0. */
    private static String spell(BigDecimal number, FuzzedDataProvider data) {
        BigDecimal value = number;
        if (data.remainingBytes() == 0) {
            return value.toPlainString();
        }
        switch (data.consumeInt(0, 3)) {
            case 0:
                return value.toPlainString();
            case 1:
                return value.setScale(Math.max(value.scale(), 0) + data.consumeInt(1, 3)).toPlainString();
            case 2: {
                // unscaled digits with an exponent: 15e-1, 15E+0, 150e-02
                BigDecimal scaled = value.setScale(Math.max(value.scale(), 0) + data.consumeInt(0, 2));
                int exponent = -scaled.scale();
                String e = data.consumeBoolean() ? "e" : "E";
                String sign = exponent >= 0 && data.consumeBoolean() ? "+" : "";
                String pad = data.consumeBoolean() ? "0" : "";
                String digits = scaled.unscaledValue().toString();
                String magnitude = digits.startsWith("-") ? digits.substring(1) : digits;
                return (digits.startsWith("-") ? "-" : "") + magnitude.replaceFirst("^0+(?=.)", "") + e + sign
                        + (exponent < 0 ? "-" + pad + (-exponent) : pad + exponent);
            }
            default:
                return value.signum() == 0 ? "-0" : value.toString().replace("E", "e");
        }
    }

    /**
     * A string literal, each code point raw or escaped as the fuzzer picks; both halves of a
     * surrogate pair alike, since JSON text is code points and half a pair raw is no text.
     */
    private static void quote(String value, FuzzedDataProvider data, StringBuilder text) {
        text.append('"');
        value.codePoints().forEach(c -> {
            boolean mustEscape = c == '"' || c == '\\' || c < 0x20;
            int how = data.remainingBytes() > 0 ? data.consumeInt(0, 2) : 0;
            if (!mustEscape && how == 0) {
                text.appendCodePoint(c);
            } else if (how == 1 && c < 0x80 && "\"\\/\b\f\n\r\t".indexOf(c) >= 0) {
                text.append('\\').append("\"\\/bfnrt".charAt("\"\\/\b\f\n\r\t".indexOf(c)));
            } else {
                boolean upper = data.remainingBytes() > 0 && data.consumeBoolean();
                for (char unit : Character.toChars(c)) {
                    String hex = String.format("%04x", (int) unit);
                    text.append("\\u").append(upper ? hex.toUpperCase() : hex);
                }
            }
        });
        text.append('"');
    }
}
