package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Content.json: RFC 8785 canonical bytes, and refusal of whatever has no single canonical form. */
class JsonContentTest {

    private static String canonical(String json) {
        return new String(Content.json(json).bytes(), StandardCharsets.UTF_8);
    }

    private static InvalidMessageException refused(String json) {
        InvalidMessageException refused = assertThrows(InvalidMessageException.class, () -> Content.json(json));
        assertEquals(InvalidMessageException.Problem.CONTENT_MALFORMED, refused.problem());
        return refused;
    }

    private static InvalidMessageException refusedBytes(byte[] utf8) {
        InvalidMessageException refused = assertThrows(InvalidMessageException.class, () -> Content.json(utf8));
        assertEquals(InvalidMessageException.Problem.CONTENT_MALFORMED, refused.problem());
        return refused;
    }

    @Test
    void keyOrderWhitespaceAndNumberSpellingDoNotChangeTheFingerprint() {
        Content compact = Content.json("{\"qty\":100,\"item\":\"crisps\",\"price\":1}");
        Content spelledOtherwise = Content.json("{ \"item\" : \"crisps\",\n\t\"price\": 1.0, \"qty\": 1e2 }");

        assertEquals(compact.fingerprint(), spelledOtherwise.fingerprint());
        assertEquals("{\"item\":\"crisps\",\"price\":1,\"qty\":100}", canonical("{\"qty\":1E+2,\"price\":1.00,\"item\":\"crisps\"}"));
        assertEquals(ContentType.JSON, compact.type());
        assertEquals(new ContentType("inbox.json", 1), ContentType.JSON);
    }

    @Test
    void aChangedValueChangesTheFingerprint() {
        Content seven = Content.json("{\"id\":\"snack-7\",\"qty\":7}");

        assertNotEquals(seven.fingerprint(), Content.json("{\"id\":\"snack-7\",\"qty\":8}").fingerprint());
        assertNotEquals(seven.fingerprint(), Content.json("{\"id\":\"snack-7\",\"qty\":\"7\"}").fingerprint());
        assertNotEquals(seven.fingerprint(), Content.json("{\"id\":\"snack-7\"}").fingerprint());
        assertNotEquals(seven.fingerprint(), Content.json("{\"id\":\"snack-7\",\"qty\":7,\"note\":null}").fingerprint());
    }

    @Test
    void stringAndUtf8BytesGiveTheSameContent() {
        String json = "{\"name\":\"Caf\u00e9 \u20ac \ud83d\ude00\"}";

        assertEquals(Content.json(json), Content.json(json.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void jsonDiffersFromTheSameTextAsPlainText() {
        assertNotEquals(Content.of("[1]").fingerprint(), Content.json("[1]").fingerprint());
    }

    /** RFC 8785, section 3.2.3: properties sort by their UTF-16 code units, not by code points. */
    @Test
    void propertiesSortByUtf16CodeUnitsAsRfc8785Requires() {
        String input = """
                {
                  "\\u20ac": "Euro Sign",
                  "\\r": "Carriage Return",
                  "\\ufb33": "Hebrew Letter Dalet With Dagesh",
                  "1": "One",
                  "\\ud83d\\ude00": "Emoji: Grinning Face",
                  "\\u0080": "Control",
                  "\\u00f6": "Latin Small Letter O With Diaeresis"
                }""";

        assertEquals("{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\","
                + "\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\","
                + "\"\ud83d\ude00\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
                canonical(input));
    }

    /**
     * RFC 8785, section 3.2.4, without its first number (333333333.33333329), which a double
     * cannot hold as written and {@link #numbersADoubleWouldRoundAreRefused} covers.
     */
    @Test
    void theRfc8785ExampleCanonicalisesAsPublished() {
        String input = """
                {
                  "numbers": [333333333.3333333, 1E30, 4.50,
                              2e-3, 0.000000000000000000000000001],
                  "string": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/",
                  "literals": [null, true, false]
                }""";

        assertEquals("{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
                + "\"string\":\"\u20ac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}", canonical(input));
    }

    @Test
    void anyJsonValueMayStandAtTheTop() {
        assertEquals("7", canonical(" 7.0 "));
        assertEquals("\"a\"", canonical("\"\\u0061\""));
        assertEquals("null", canonical("null"));
        assertEquals("-0.5", canonical("-5e-1"));
        assertEquals("0", canonical("-0"));
    }

    @Test
    void canonicalBytesAreTheirOwnCanonicalForm() {
        Content content = Content.json("{\"b\":[1.50, {\"d\":\"\\n\", \"c\":true}], \"a\":-0.0}");

        assertEquals("{\"a\":0,\"b\":[1.5,{\"c\":true,\"d\":\"\\n\"}]}", canonical("{\"b\":[1.50, {\"d\":\"\\n\", \"c\":true}], \"a\":-0.0}"));
        assertArrayEquals(content.bytes(), Content.json(content.bytes()).bytes());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "", " ", "{", "}", "[1,]", "[,1]", "{\"a\":}", "{\"a\" 1}", "{\"a\":1,}", "{a:1}", "{'a':1}",
        "[1 2]", "{} {}", "[] x", "[01]", "[-01]", "[+1]", "[.5]", "[1.]", "[1e]", "[1e+]", "[-]",
        "[NaN]", "[Infinity]", "[tru]", "[True]", "[nul]", "[\"a\tb\"]", "[\"\\x\"]", "[\"\\u12\"]",
        "[\"\\u12G4\"]", "[\"unterminated]", "[\u00a01]", "\ufeff{}", "/* no */ []", "[1]\u0000"
    })
    void malformedJsonIsRefused(String json) {
        refused(json);
    }

    @Test
    void duplicateKeysAreRefusedHoweverTheyAreSpelled() {
        refused("{\"a\":1,\"a\":1}");
        refused("{\"a\":1,\"\\u0061\":2}");
        refused("[{\"ok\":1},{\"x\":{\"b\":1,\"b\":2}}]");
    }

    @Test
    void loneSurrogatesAreRefusedRatherThanReplaced() {
        refused("[\"\\ud800\"]");
        refused("[\"\\udc00\"]");
        refused("[\"\\ud800\\u0041\"]");
        refused("[\"\ud800\"]");
        refused("{\"\\ud83d\":1}");
        refused("[\"\\ude00\\ud83d\"]");
        // The value would hold a pair, but the text holds a lone raw half, which UTF-8 cannot carry.
        refused("[\"" + (char) 0xd83d + "\\ude00\"]");
        refused("[1]" + (char) 0xdc00);
        assertEquals("[\"\ud83d\ude00\"]", canonical("[\"\\ud83d\\ude00\"]"));
    }

    @Test
    void bytesThatAreNotUtf8AreRefusedRatherThanReplaced() {
        refusedBytes(new byte[] {'[', '"', (byte) 0xff, '"', ']'});
        refusedBytes(new byte[] {'[', '"', (byte) 0xc3, '"', ']'});
        refusedBytes(new byte[] {'[', '"', (byte) 0xc0, (byte) 0xaf, '"', ']'});
        refusedBytes(new byte[] {'[', '"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"', ']'});
        refusedBytes(new byte[] {(byte) 0xef, (byte) 0xbb, (byte) 0xbf, '[', ']'});
    }

    /**
     * A double holds about 16 significant digits. Two numbers that round to the same double would
     * get the same fingerprint, and a changed amount would pass for a duplicate: refused.
     */
    @Test
    void numbersADoubleWouldRoundAreRefused() {
        refused("[9007199254740993]");
        refused("[333333333.33333329]");
        refused("[1e-400]");
        refused("[1e400]");
        refused("[-1e309]");
        refused("[0.1000000000000000055511151231257827]");
        // Java's Double.toString(Double.MIN_VALUE): the double prints as 5e-324, a different number.
        refused("[4.9E-324]");
        assertEquals("[9007199254740992,9007199254740994,1e+21,0.1,2.2250738585072014e-308]",
                canonical("[9007199254740992, 9007199254740994, 1e21, 0.10, 2.2250738585072014e-308]"));
    }

    /**
     * Subnormal doubles are refused: the canonicaliser's number formatting loops for ever on some
     * of them and overflows on others (found by fuzzing). The timeout turns a hang into a failure.
     */
    @Test
    @org.junit.jupiter.api.Timeout(60)
    void subnormalNumbersAreRefused() {
        refused("[1e-315]");
        refused("[1e-314]");
        refused("[-2e-315]");
        refused("[5e-324]");
        refused("[2.225073858507201e-308]");
        assertEquals("[0,0]", canonical("[0, -0.0e-400]"));
    }

    @Test
    void nestingIsBoundedSoTheCanonicaliserCannotOverflowTheStack() {
        assertEquals("[".repeat(100) + "]".repeat(100), canonical("[".repeat(100) + "]".repeat(100)));
        refused("[".repeat(101) + "]".repeat(101));
        refused("[".repeat(100_000) + "]".repeat(100_000));
    }

    @Test
    void refusalsNeverRepeatTheContent() {
        String message = refused("{\"secret-name\":1,\"secret-name\":2}").getMessage();

        assertFalse(message.contains("secret"), message);
        assertFalse(refused("[12345678901234567890123]").getMessage().contains("12345"));
    }

    @Test
    void nullIsRefusedLikeTheOtherFactories() {
        assertThrows(NullPointerException.class, () -> Content.json((String) null));
        assertThrows(NullPointerException.class, () -> Content.json((byte[]) null));
    }
}
