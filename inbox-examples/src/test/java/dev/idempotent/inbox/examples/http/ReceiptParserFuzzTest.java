package dev.idempotent.inbox.examples.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.idempotent.inbox.examples.ReferenceJson;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The receipt parser against docs/PROTOCOL.md's "Request" section, read independently by
 * {@link #protocolReading}: it accepts exactly the bodies the protocol accepts, with the same
 * receipt, and refuses every other body with a 400 and one of the documented error codes, never
 * with any other exception.
 *
 * <p>Without {@code JAZZER_FUZZ} this replays the committed inputs under
 * {@code src/test/resources/.../ReceiptParserFuzzTestInputs/}; {@code scripts/fuzz} fuzzes it.
 */
class ReceiptParserFuzzTest {

    private static final Set<String> ERROR_CODES = Set.of("malformed_json", "invalid_encoding", "not_an_object",
            "missing_id", "invalid_id", "missing_qty", "invalid_qty", "invalid_origin", "unknown_field");

    /** The origin's one spelling: {@code YYYY-MM-DDTHH:MM:SS[.fraction]Z}; {@code \d} is ASCII only. */
    private static final Pattern ORIGIN =
            Pattern.compile("(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d{1,9}))?Z");

    @FuzzTest
    @DictionaryEntries({"\"id\"", "\"qty\"", "\"origin\"", "\\u", "2026-02-29T", "T23:59:59.123456789Z", "\uFEFF",
            "2147483647", "2147483648", "1e0", "-0", "null", "true"})
    void parserAcceptsExactlyWhatTheProtocolAccepts(byte[] body) {
        Optional<Receipt> expected = protocolReading(body);
        Receipt parsed;
        try {
            parsed = ReceiptParser.parse(body);
        } catch (Refusal.Thrown thrown) {
            Refusal refusal = thrown.refusal();
            assertEquals(400, refusal.status());
            assertTrue(ERROR_CODES.contains(refusal.error()), refusal.error());
            if (expected.isPresent()) {
                fail("refused with " + refusal.error() + " a body the protocol accepts: " + expected.get());
            }
            boolean encodingOk = ReferenceJson.utf8(body).filter(t -> !t.startsWith("\uFEFF") && t.indexOf('\0') < 0)
                    .isPresent();
            assertEquals(!encodingOk, refusal.error().equals("invalid_encoding"),
                    "invalid_encoding is the answer exactly to a body that is not strict UTF-8 without NUL");
            return;
        }
        assertEquals(expected, Optional.of(parsed), "the receipt the protocol reads in this body");
    }

    /** The receipt docs/PROTOCOL.md reads in {@code body}, or empty when it says to refuse it. */
    static Optional<Receipt> protocolReading(byte[] body) {
        Optional<String> text = ReferenceJson.utf8(body);
        if (text.isEmpty() || text.get().indexOf('\0') >= 0) {
            return Optional.empty();
        }
        Optional<Object> json = ReferenceJson.read(body);
        if (json.isEmpty() || !(json.get() instanceof Map<?, ?> fields)) {
            return Optional.empty();
        }
        if (!Set.of("id", "qty", "origin").containsAll(fields.keySet())) {
            return Optional.empty();
        }
        if (!(fields.get("id") instanceof String id) || !validId(id)) {
            return Optional.empty();
        }
        if (!(fields.get("qty") instanceof ReferenceJson.Number qty) || !qty.isInteger()) {
            return Optional.empty();
        }
        BigInteger value = new BigInteger(qty.text());
        if (value.signum() < 1 || value.compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
            return Optional.empty();
        }
        Optional<Instant> origin = Optional.empty();
        if (fields.containsKey("origin")) {
            if (!(fields.get("origin") instanceof String written)) {
                return Optional.empty();
            }
            origin = origin(written);
            if (origin.isEmpty()) {
                return Optional.empty();
            }
        }
        return Optional.of(new Receipt(id, value.intValue(), origin));
    }

    /** 1 to 255 code points, not blank, no control characters, no unpaired surrogates. */
    static boolean validId(String id) {
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < id.length() && Character.isLowSurrogate(id.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        long length = id.codePoints().count();
        boolean blank = id.codePoints().allMatch(Character::isWhitespace);
        boolean control = id.codePoints().anyMatch(c -> Character.getType(c) == Character.CONTROL);
        return length >= 1 && length <= 255 && !blank && !control;
    }

    /** RFC 3339 in UTC with upper-case T and Z, 1 to 9 fraction digits, and a date that exists. */
    static Optional<Instant> origin(String written) {
        Matcher m = ORIGIN.matcher(written);
        if (!m.matches()) {
            return Optional.empty();
        }
        int year = Integer.parseInt(m.group(1));
        int month = Integer.parseInt(m.group(2));
        int day = Integer.parseInt(m.group(3));
        int hour = Integer.parseInt(m.group(4));
        int minute = Integer.parseInt(m.group(5));
        int second = Integer.parseInt(m.group(6));
        boolean leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        int[] monthDays = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        if (month < 1 || month > 12 || day < 1 || day > monthDays[month - 1] || hour > 23 || minute > 59 || second > 59) {
            return Optional.empty();
        }
        String fraction = m.group(7) == null ? "" : m.group(7);
        int nanos = fraction.isEmpty() ? 0 : Integer.parseInt((fraction + "00000000").substring(0, 9));
        return Optional.of(LocalDateTime.of(year, month, day, hour, minute, second, nanos).toInstant(ZoneOffset.UTC));
    }
}
