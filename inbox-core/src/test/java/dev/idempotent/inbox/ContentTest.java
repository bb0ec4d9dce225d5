package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.junit.jupiter.api.Test;

class ContentTest {

    /** The v1 digest of Content.of(7), written down once. */
    private static final String PINNED_SNACK_7 = "d37278d5aaaf0363fd47e739e22b976e1089e67c46c56f21a234f16b09386b18";

    /**
     * Pins encoding v1: stored fingerprints must stay comparable forever, so any change to the
     * encoding has to come as a new version, and this test is what says so.
     */
    @Test
    void fingerprintV1IsSha256OverTheDocumentedEncoding() throws Exception {
        ByteArrayOutputStream encoded = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(encoded);
        out.write("dev.idempotent.inbox/fingerprint/1".getBytes(StandardCharsets.US_ASCII));
        byte[] name = "inbox.int64".getBytes(StandardCharsets.UTF_8);
        out.writeInt(name.length);
        out.write(name);
        out.writeInt(1);
        out.writeLong(8);
        out.writeLong(7);
        byte[] expected = MessageDigest.getInstance("SHA-256").digest(encoded.toByteArray());

        Fingerprint fingerprint = Content.of(7).fingerprint();

        assertEquals(1, fingerprint.algorithm());
        assertEquals(ContentType.INT64, fingerprint.contentType());
        assertArrayEquals(expected, fingerprint.digest());
        assertEquals(PINNED_SNACK_7, fingerprint.hex());
    }


    @Test
    void equalValuesHaveEqualFingerprints() {
        assertEquals(Content.of(7).fingerprint(), Content.of(7).fingerprint());
        assertEquals(Content.of("snack").fingerprint(), Content.of("snack").fingerprint());
        assertNotEquals(Content.of(7).fingerprint(), Content.of(8).fingerprint());
    }

    @Test
    void sameBytesUnderDifferentTypesDiffer() {
        byte[] seven = Content.of(7).bytes();

        assertNotEquals(Content.of(7).fingerprint(), Content.ofBytes(seven).fingerprint());
        assertNotEquals(Content.structured("qty", 1, seven).fingerprint(),
                Content.structured("qty", 2, seven).fingerprint());
        assertNotEquals(Content.of("7").fingerprint(), Content.ofBytes("7".getBytes(StandardCharsets.UTF_8)).fingerprint());
    }

    @Test
    void lengthPrefixesKeepTypeNameAndBytesApart() {
        // Without length prefixes "ab" + [c] and "a" + [b, c] could encode alike.
        assertNotEquals(Content.structured("ab", 1, new byte[] {'c'}).fingerprint(),
                Content.structured("a", 1, new byte[] {'b', 'c'}).fingerprint());
    }

    @Test
    void bytesAreCopiedInAndOut() {
        byte[] original = {1, 2, 3};
        Content content = Content.ofBytes(original);
        original[0] = 9;
        content.bytes()[1] = 9;

        assertArrayEquals(new byte[] {1, 2, 3}, content.bytes());
    }

    @Test
    void textWithAnUnpairedSurrogateIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Content.of("snack\uD800"));
    }

    @Test
    void reservedSchemaNamesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Content.structured("inbox.int64", 1, new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> Content.structured(" ", 1, new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> Content.structured("order", 0, new byte[0]));
    }

    @Test
    void toStringNeverShowsTheContent() {
        String shown = Content.of("Jane Doe, 1 Main Street").toString();

        assertFalse(shown.contains("Jane"), shown);
        assertEquals("Content[inbox.utf8@1, 23 bytes]", shown);
    }

    @Test
    void fingerprintRefusesAWrongDigestLengthAndCopiesItsDigest() {
        assertThrows(IllegalArgumentException.class, () -> new Fingerprint(1, ContentType.BYTES, new byte[31]));
        Fingerprint fingerprint = Content.of(7).fingerprint();
        fingerprint.digest()[0] ^= 1;

        assertEquals(Content.of(7).fingerprint(), fingerprint);
    }
}
