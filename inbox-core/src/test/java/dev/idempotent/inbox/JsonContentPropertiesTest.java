package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.core.RandomnessSource;
import org.quicktheories.generators.Generate;

/**
 * Content.json fingerprints JSON values, not JSON texts: every way of writing one value gives one
 * fingerprint, and every change of value gives another.
 *
 * <p>Values are generated as trees of objects, arrays, strings (with non-ASCII characters, a
 * surrogate pair and characters that must be escaped), integers up to 2^53 and decimals of up to
 * 15 significant digits, which a double always holds exactly. Each tree is then written out in
 * random ways: keys in any order, any JSON whitespace, characters escaped or not, and numbers
 * spelled with or without fractions, exponents and trailing zeros. The alphabets are small so
 * that keys and values collide.
 */
class JsonContentPropertiesTest {

    /** JSON null in the generated trees, where Java's null would be ambiguous in maps. */
    private enum JsonNull { NULL }

    private static final List<String> ALPHABET = List.of(
            "a", "b", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u0000", "\u001f", "\u007f",
            "\u00e9", "\u20ac", "\u4e2d", "\u2028", "\ufffd", "\ufb33", "\ud83d\ude00");
    private static final List<String> WHITESPACE = List.of("", "", " ", "\n", "\t", "\r\n", "  ");
    private static final int MAX_DEPTH = 3;

    private static final Gen<Object> TREES = in -> tree(in, 0);
    private static final Gen<Long> SEEDS = longs().all();

    @Test
    void everySpellingOfOneValueHasOneFingerprint() {
        qt().forAll(TREES, SEEDS, SEEDS).checkAssert((tree, first, second) -> {
            String one = write(tree, new Random(first));
            String other = write(tree, new Random(second));

            assertEquals(Content.json(one).fingerprint(), Content.json(other).fingerprint(),
                    () -> one + "\n" + other);
            assertEquals(Content.json(one), Content.json(other.getBytes(StandardCharsets.UTF_8)));
        });
    }

    @Test
    void everyChangeOfValueChangesTheFingerprint() {
        qt().forAll(TREES, SEEDS, SEEDS).checkAssert((tree, change, spelling) -> {
            Object changed = change(tree, new Random(change), 0);
            assertFalse(same(tree, changed), "the change changed nothing");
            String before = write(tree, new Random(spelling));
            String after = write(changed, new Random(spelling));

            assertNotEquals(Content.json(before).fingerprint(), Content.json(after).fingerprint(),
                    () -> before + "\n" + after);
        });
    }

    @Test
    void canonicalBytesAreAFixedPoint() {
        qt().forAll(TREES, SEEDS).checkAssert((tree, seed) -> {
            byte[] canonical = Content.json(write(tree, new Random(seed))).bytes();

            assertArrayEquals(canonical, Content.json(canonical).bytes());
        });
    }

    // ---- generating values ------------------------------------------------------------------

    private static int draw(RandomnessSource in, int min, int max) {
        return Generate.range(min, max).generate(in);
    }

    private static Object tree(RandomnessSource in, int depth) {
        int kind = draw(in, 0, depth < MAX_DEPTH ? 7 : 5);
        switch (kind) {
            case 0:
                return text(in);
            case 1:
                return BigDecimal.valueOf(draw(in, -3, 3));
            case 2:
                return BigDecimal.valueOf(Generate.longRange(-(1L << 53), 1L << 53).generate(in));
            case 3:
                return decimal(in);
            case 4:
                return draw(in, 0, 1) == 0 ? Boolean.valueOf(draw(in, 0, 1) == 0) : JsonNull.NULL;
            case 5:
                return text(in);
            case 6: {
                List<Object> array = new ArrayList<>();
                int size = draw(in, 0, 4);
                for (int i = 0; i < size; i++) {
                    array.add(tree(in, depth + 1));
                }
                return array;
            }
            default: {
                Map<String, Object> object = new LinkedHashMap<>();
                int size = draw(in, 0, 5);
                for (int i = 0; i < size; i++) {
                    object.putIfAbsent(text(in), tree(in, depth + 1));
                }
                return object;
            }
        }
    }

    private static String text(RandomnessSource in) {
        StringBuilder text = new StringBuilder();
        int length = draw(in, 0, 4);
        for (int i = 0; i < length; i++) {
            text.append(ALPHABET.get(draw(in, 0, ALPHABET.size() - 1)));
        }
        return text.toString();
    }

    /** Up to 15 significant digits: every such decimal in a double's normal range survives the round trip. */
    private static BigDecimal decimal(RandomnessSource in) {
        long unscaled = Generate.longRange(-999_999_999_999_999L, 999_999_999_999_999L).generate(in);
        return BigDecimal.valueOf(unscaled, draw(in, -20, 20));
    }

    /** A different value: a leaf replaced, a key added or removed, an element added or removed, or deeper. */
    private static Object change(Object node, Random random, int depth) {
        if (node instanceof Map<?, ?> map && !map.isEmpty() && random.nextInt(3) == 0) {
            Map<String, Object> changed = copy(map);
            List<String> keys = new ArrayList<>(changed.keySet());
            String key = keys.get(random.nextInt(keys.size()));
            changed.put(key, change(changed.get(key), random, depth + 1));
            return changed;
        }
        if (node instanceof List<?> list && !list.isEmpty() && random.nextInt(3) == 0) {
            List<Object> changed = new ArrayList<>(list);
            int index = random.nextInt(changed.size());
            changed.set(index, change(changed.get(index), random, depth + 1));
            return changed;
        }
        if (node instanceof Map<?, ?> map && random.nextBoolean()) {
            Map<String, Object> changed = copy(map);
            if (!changed.isEmpty() && random.nextBoolean()) {
                changed.remove(new ArrayList<>(changed.keySet()).get(random.nextInt(changed.size())));
            } else {
                String key = "k";
                while (changed.containsKey(key)) {
                    key += "k";
                }
                changed.put(key, random.nextInt(10) == 0 ? JsonNull.NULL : BigDecimal.valueOf(random.nextInt(5)));
            }
            return changed;
        }
        if (node instanceof List<?> list && random.nextBoolean()) {
            List<Object> changed = new ArrayList<>(list);
            if (!changed.isEmpty() && random.nextBoolean()) {
                changed.remove(random.nextInt(changed.size()));
            } else {
                changed.add(random.nextInt(changed.size() + 1), JsonNull.NULL);
            }
            return changed;
        }
        Object replacement;
        do {
            replacement = leaf(node, random);
        } while (same(node, replacement));
        return replacement;
    }

    /** Mostly a near value of the same kind, sometimes another kind altogether. */
    private static Object leaf(Object node, Random random) {
        if (random.nextInt(4) == 0) {
            List<Object> others = List.of(JsonNull.NULL, Boolean.TRUE, Boolean.FALSE, "", BigDecimal.ZERO,
                    List.of(), Map.of());
            return others.get(random.nextInt(others.size()));
        }
        if (node instanceof BigDecimal number) {
            // One unit in the last place of up to 15 digits: still a number a double holds exactly.
            BigDecimal step = BigDecimal.ONE.movePointLeft(Math.max(number.scale(), 0));
            BigDecimal changed = random.nextBoolean() ? number.add(step) : number.subtract(step);
            return changed.precision() <= 15 ? changed : number.negate();
        }
        if (node instanceof String text) {
            return random.nextBoolean() || text.isEmpty()
                    ? text + ALPHABET.get(random.nextInt(ALPHABET.size()))
                    : text.substring(0, text.offsetByCodePoints(text.length(), -1));
        }
        if (node instanceof Boolean flag) {
            return !flag;
        }
        return BigDecimal.valueOf(random.nextInt(3));
    }

    private static Map<String, Object> copy(Map<?, ?> map) {
        Map<String, Object> copy = new LinkedHashMap<>();
        map.forEach((key, value) -> copy.put((String) key, value));
        return copy;
    }

    /** Equality of JSON values: numbers by value (1.0 is 1), objects regardless of key order. */
    private static boolean same(Object a, Object b) {
        if (a instanceof BigDecimal x && b instanceof BigDecimal y) {
            return x.compareTo(y) == 0;
        }
        if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
            return x.keySet().equals(y.keySet()) && x.keySet().stream().allMatch(key -> same(x.get(key), y.get(key)));
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            if (x.size() != y.size()) {
                return false;
            }
            for (int i = 0; i < x.size(); i++) {
                if (!same(x.get(i), y.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return a.equals(b);
    }

    // ---- writing values out ------------------------------------------------------------------

    private static String write(Object tree, Random random) {
        StringBuilder out = new StringBuilder();
        space(out, random);
        write(tree, random, out);
        space(out, random);
        return out.toString();
    }

    private static void write(Object node, Random random, StringBuilder out) {
        if (node instanceof Map<?, ?> map) {
            List<Object> keys = new ArrayList<>(map.keySet());
            Collections.shuffle(keys, random);
            out.append('{');
            space(out, random);
            for (int i = 0; i < keys.size(); i++) {
                if (i > 0) {
                    out.append(',');
                    space(out, random);
                }
                string((String) keys.get(i), random, out);
                space(out, random);
                out.append(':');
                space(out, random);
                write(map.get(keys.get(i)), random, out);
                space(out, random);
            }
            out.append('}');
        } else if (node instanceof List<?> list) {
            out.append('[');
            space(out, random);
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                    space(out, random);
                }
                write(list.get(i), random, out);
                space(out, random);
            }
            out.append(']');
        } else if (node instanceof String text) {
            string(text, random, out);
        } else if (node instanceof BigDecimal number) {
            out.append(number(number, random));
        } else if (node instanceof Boolean flag) {
            out.append(flag);
        } else {
            out.append("null");
        }
    }

    private static void space(StringBuilder out, Random random) {
        out.append(WHITESPACE.get(random.nextInt(WHITESPACE.size())));
    }

    /**
     * Each character raw, as a short escape, or as \\u escapes in either case. The two halves of a
     * surrogate pair are both raw or both escaped: JSON text is code points, and a lone raw half
     * is no text at all.
     */
    private static void string(String text, Random random, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c)) {
                String pair = text.substring(i, i + 2);
                i++;
                out.append(random.nextBoolean() ? pair : hex(pair.charAt(0), random) + hex(pair.charAt(1), random));
                continue;
            }
            String shortEscape = switch (c) {
                case '"' -> "\\\"";
                case '\\' -> "\\\\";
                case '/' -> "\\/";
                case '\b' -> "\\b";
                case '\f' -> "\\f";
                case '\n' -> "\\n";
                case '\r' -> "\\r";
                case '\t' -> "\\t";
                default -> null;
            };
            boolean mayBeRaw = c >= 0x20 && c != '"' && c != '\\';
            int choice = random.nextInt(3);
            if (mayBeRaw && choice == 0) {
                out.append(c);
            } else if (shortEscape != null && choice == 1) {
                out.append(shortEscape);
            } else {
                out.append(hex(c, random));
            }
        }
        out.append('"');
    }

    private static String hex(char c, Random random) {
        String digits = String.format("%04x", (int) c);
        return "\\u" + (random.nextBoolean() ? digits : digits.toUpperCase());
    }

    /** The same number, with its point moved into an exponent, trailing zeros, or a negative zero. */
    private static String number(BigDecimal value, Random random) {
        if (value.signum() == 0 && random.nextInt(4) == 0) {
            return random.nextBoolean() ? "-0" : "-0.0e7";
        }
        int shift = random.nextInt(7) - 3;
        String mantissa = value.movePointLeft(shift).toPlainString();
        if (random.nextBoolean()) {
            String zeros = "0".repeat(1 + random.nextInt(3));
            mantissa += mantissa.contains(".") ? zeros : "." + zeros;
        }
        if (shift == 0 && random.nextBoolean()) {
            return mantissa;
        }
        String exponent = shift < 0 ? "-" + -shift : (random.nextBoolean() ? "+" : "") + shift;
        if (random.nextInt(4) == 0) {
            exponent = exponent.startsWith("-") || exponent.startsWith("+")
                    ? exponent.charAt(0) + "0" + exponent.substring(1)
                    : "0" + exponent;
        }
        return mantissa + (random.nextBoolean() ? "e" : "E") + exponent;
    }
}
