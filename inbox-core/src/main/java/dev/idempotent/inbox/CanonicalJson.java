package dev.idempotent.inbox;

import dev.idempotent.inbox.InvalidMessageException.Problem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.erdtman.jcs.JsonCanonicalizer;
import org.erdtman.jcs.NumberToJSON;

/**
 * The RFC 8785 canonical form behind {@link Content#json(String)}.
 *
 * <p>The canonical bytes come from the reference canonicaliser of the RFC's authors
 * ({@code org.erdtman.jcs}). That canonicaliser is lenient where a fingerprint must not be: it
 * turns an unpaired surrogate into {@code ?} and bytes that are not UTF-8 into U+FFFD, accepts
 * {@code 01}, rounds numbers a double cannot hold, and recurses without bound. Each of these
 * would let two different messages share a fingerprint, or fail with a {@code StackOverflowError}.
 * So the text is first read here, strictly by RFC 8259 and RFC 8785's I-JSON rules, and refused
 * with {@link Problem#CONTENT_MALFORMED} unless the canonical form will be the same value as
 * written. Refusal messages give a reason and an index, never the content.
 */
final class CanonicalJson {

    /** Deep enough for any business document, and shallow enough for the canonicaliser's recursion on any thread. */
    static final int MAX_DEPTH = 100;

    /** A double's shortest decimal form has at most 17 significant digits. */
    private static final int MAX_SIGNIFICANT_DIGITS = 17;

    private CanonicalJson() {
    }

    /** The canonical UTF-8 bytes of the JSON text in {@code utf8}. */
    static byte[] canonicalize(byte[] utf8) {
        return canonicalize(decode(utf8));
    }

    /** The canonical UTF-8 bytes of the JSON text {@code json}. */
    static byte[] canonicalize(String json) {
        boolean container = new Reader(json).document();
        String canonical;
        try {
            if (container) {
                canonical = new JsonCanonicalizer(json).getEncodedString();
            } else {
                // The canonicaliser takes only objects and arrays at the top; an array of one
                // value is written as "[" + the value's canonical form + "]".
                String wrapped = new JsonCanonicalizer("[" + json + "]").getEncodedString();
                canonical = wrapped.substring(1, wrapped.length() - 1);
            }
            return FingerprintEncoding.utf8(canonical);
        } catch (IOException | IllegalArgumentException e) {
            // Unreachable for text the reader accepted; the cause is left out, as its message quotes the content.
            throw malformed("the canonicaliser refused it");
        }
    }

    private static String decode(byte[] utf8) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(utf8);
        CharBuffer out = CharBuffer.allocate(utf8.length);
        CoderResult result = decoder.decode(in, out, true);
        if (result.isError()) {
            throw malformed("not UTF-8 at byte " + in.position());
        }
        decoder.flush(out);
        return out.flip().toString();
    }

    /** The index of the first surrogate that is not half of a pair, or -1. */
    private static int unpairedSurrogate(CharSequence text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }

    private static InvalidMessageException malformed(String reason) {
        return new InvalidMessageException(Problem.CONTENT_MALFORMED, "JSON content refused: " + reason);
    }

    /** A strict RFC 8259 reader that checks and builds nothing but the keys of open objects. */
    private static final class Reader {
        private final String text;
        private int at;

        Reader(String text) {
            this.text = text;
        }

        /** Reads the whole text; true when its value is an object or an array. */
        boolean document() {
            if (text.startsWith("\ufeff")) {
                throw malformed("it starts with a byte-order mark, which RFC 8259 forbids senders to add");
            }
            // JSON text is a sequence of code points; checked before escapes are read, so that
            // a raw half and an escaped half of a pair are refused as the bytes path refuses them.
            int unpaired = unpairedSurrogate(text);
            if (unpaired >= 0) {
                throw malformed("an unpaired surrogate, which has no UTF-8 form, at index " + unpaired);
            }
            space();
            boolean container = at < text.length() && (text.charAt(at) == '{' || text.charAt(at) == '[');
            value(1);
            space();
            if (at < text.length()) {
                throw fail("text after the JSON value");
            }
            return container;
        }

        private InvalidMessageException fail(String reason) {
            return malformed(reason + " at index " + at);
        }

        private void space() {
            while (at < text.length()) {
                char c = text.charAt(at);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                at++;
            }
        }

        private char peek() {
            if (at >= text.length()) {
                throw fail("the text ends inside a JSON value");
            }
            return text.charAt(at);
        }

        private void value(int depth) {
            char c = peek();
            switch (c) {
                case '{' -> object(depth);
                case '[' -> array(depth);
                case '"' -> string();
                case 't' -> literal("true");
                case 'f' -> literal("false");
                case 'n' -> literal("null");
                default -> {
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        number();
                    } else {
                        throw fail("no JSON value starts with this character");
                    }
                }
            }
        }

        private void nest(int depth) {
            if (depth > MAX_DEPTH) {
                throw fail("objects and arrays nested deeper than " + MAX_DEPTH);
            }
        }

        private void object(int depth) {
            nest(depth);
            at++;
            space();
            if (peek() == '}') {
                at++;
                return;
            }
            Set<String> keys = new HashSet<>();
            while (true) {
                if (peek() != '"') {
                    throw fail("expected a key in double quotes");
                }
                int keyAt = at;
                if (!keys.add(string())) {
                    at = keyAt;
                    throw fail("a duplicate key");
                }
                space();
                if (peek() != ':') {
                    throw fail("expected ':'");
                }
                at++;
                space();
                value(depth + 1);
                space();
                char next = peek();
                at++;
                if (next == '}') {
                    return;
                }
                if (next != ',') {
                    at--;
                    throw fail("expected ',' or '}'");
                }
                space();
            }
        }

        private void array(int depth) {
            nest(depth);
            at++;
            space();
            if (peek() == ']') {
                at++;
                return;
            }
            while (true) {
                value(depth + 1);
                space();
                char next = peek();
                at++;
                if (next == ']') {
                    return;
                }
                if (next != ',') {
                    at--;
                    throw fail("expected ',' or ']'");
                }
                space();
            }
        }

        private void literal(String word) {
            if (!text.startsWith(word, at)) {
                throw fail("expected true, false or null");
            }
            at += word.length();
        }

        /** Reads a string and returns its value, refusing control characters and unpaired surrogates. */
        private String string() {
            int start = at;
            at++;
            StringBuilder value = new StringBuilder();
            while (true) {
                if (at >= text.length()) {
                    at = start;
                    throw fail("a string without its closing quote");
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    break;
                }
                if (c == '\\') {
                    value.append(escape());
                } else if (c < 0x20) {
                    at--;
                    throw fail("a control character not escaped in a string");
                } else {
                    value.append(c);
                }
            }
            if (unpairedSurrogate(value) >= 0) {
                at = start;
                throw fail("a string with an unpaired surrogate, which has no UTF-8 form");
            }
            return value.toString();
        }

        private char escape() {
            char c = peek();
            at++;
            switch (c) {
                case '"', '\\', '/':
                    return c;
                case 'b':
                    return '\b';
                case 'f':
                    return '\f';
                case 'n':
                    return '\n';
                case 'r':
                    return '\r';
                case 't':
                    return '\t';
                case 'u':
                    int code = 0;
                    for (int i = 0; i < 4; i++) {
                        char h = peek();
                        int digit = h >= '0' && h <= '9' ? h - '0'
                                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                : -1;
                        if (digit < 0) {
                            throw fail("a \\u escape without four hexadecimal digits");
                        }
                        code = code * 16 + digit;
                        at++;
                    }
                    return (char) code;
                default:
                    at--;
                    throw fail("an escape JSON does not have");
            }
        }

        private void number() {
            int start = at;
            if (text.charAt(at) == '-') {
                at++;
            }
            if (at < text.length() && text.charAt(at) == '0') {
                at++;
            } else if (digits() == 0) {
                throw fail("a number without digits");
            }
            if (at < text.length() && text.charAt(at) == '.') {
                at++;
                if (digits() == 0) {
                    throw fail("a number without digits after its point");
                }
            }
            if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
                at++;
                if (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) {
                    at++;
                }
                if (digits() == 0) {
                    throw fail("a number without digits in its exponent");
                }
            }
            exact(text.substring(start, at), start);
        }

        private int digits() {
            int start = at;
            while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') {
                at++;
            }
            return at - start;
        }

        /**
         * Refuses a number unless the canonical form, the shortest decimal of the nearest double,
         * is the same number as written. Otherwise two numbers would round to one double, and a
         * changed amount would pass for a duplicate (9007199254740993 and 9007199254740992, for
         * instance).
         */
        private void exact(String written, int start) {
            Decimal value = Decimal.of(written);
            if (value.digits().length() > MAX_SIGNIFICANT_DIGITS) {
                at = start;
                throw fail("a number with more significant digits than a double holds; send it as a string");
            }
            double nearest = Double.parseDouble(written);
            if (Double.isInfinite(nearest)) {
                at = start;
                throw fail("a number beyond the range of a double");
            }
            if (nearest != 0 && Math.abs(nearest) < Double.MIN_NORMAL) {
                // The canonicaliser's number formatting loops for ever on some subnormal doubles
                // (1e-315) and overflows on others (1e-314): a fuzz finding. No business amount
                // is that small, and a subnormal holds fewer digits than a double anyway.
                at = start;
                throw fail("a number below the smallest normal double in magnitude; send it as a string");
            }
            try {
                if (!value.equals(Decimal.of(NumberToJSON.serializeNumber(nearest)))) {
                    at = start;
                    throw fail("a number that a double cannot hold as written; send it as a string");
                }
            } catch (IOException e) {
                throw new IllegalStateException("a finite double always has a JSON form", e);
            }
        }
    }

    /**
     * A decimal number as its significant digits, without leading or trailing zeros, and the power
     * of ten they are multiplied by; zero has no digits and exponent 0, whatever its sign. Two
     * decimals are equal numbers exactly when their records are equal.
     */
    private record Decimal(boolean negative, String digits, long exponent) {

        /** Parses a number that matches the JSON grammar, in time linear in its length. */
        static Decimal of(String number) {
            int at = 0;
            boolean negative = number.charAt(0) == '-';
            if (negative) {
                at++;
            }
            StringBuilder digits = new StringBuilder();
            long fraction = 0;
            boolean inFraction = false;
            for (; at < number.length(); at++) {
                char c = number.charAt(at);
                if (c == '.') {
                    inFraction = true;
                } else if (c == 'e' || c == 'E') {
                    break;
                } else {
                    if (digits.length() > 0 || c != '0') {
                        digits.append(c);
                    }
                    if (inFraction) {
                        fraction++;
                    }
                }
            }
            long exponent = at < number.length() ? exponent(number.substring(at + 1)) : 0;
            int end = digits.length();
            while (end > 0 && digits.charAt(end - 1) == '0') {
                end--;
            }
            if (end == 0) {
                return new Decimal(false, "", 0);
            }
            // Bounded above by the exponent clamp, so no overflow.
            return new Decimal(negative, digits.substring(0, end), exponent - fraction + (digits.length() - end));
        }

        /** Clamped far beyond any double's exponent, so a long cannot overflow and no double is equal. */
        private static long exponent(String written) {
            int at = written.charAt(0) == '+' || written.charAt(0) == '-' ? 1 : 0;
            while (at < written.length() - 1 && written.charAt(at) == '0') {
                at++;
            }
            String digits = written.substring(at);
            long magnitude = digits.length() > 12 ? 1_000_000_000_000L : Long.parseLong(digits);
            return written.charAt(0) == '-' ? -magnitude : magnitude;
        }
    }
}
