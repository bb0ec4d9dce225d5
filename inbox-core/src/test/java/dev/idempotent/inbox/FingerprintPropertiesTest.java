package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Fingerprints decide Duplicate against Conflict, so they must be equal exactly when the content
 * is: same type (name and version) and same value. The inputs come from small domains, so that
 * equal contents, and near misses such as the same bytes under another type or a type name that
 * ends where the bytes begin, are frequent. A failure prints its seed; replay it with
 * {@code -DQT_SEED=...} as the testkit's {@code InboxProperties} describes.
 */
class FingerprintPropertiesTest {

    /** How a content was made: a factory and its arguments. */
    sealed interface Spec permits Int64, Text, Bytes, Structured {
        Content content();
    }

    record Int64(long value) implements Spec {
        public Content content() {
            return Content.of(value);
        }
    }

    record Text(String text) implements Spec {
        public Content content() {
            return Content.of(text);
        }
    }

    record Bytes(byte[] bytes) implements Spec {
        public Content content() {
            return Content.ofBytes(bytes);
        }

        @Override
        public String toString() {
            return "Bytes[" + HexFormat.of().formatHex(bytes) + "]";
        }
    }

    record Structured(String schema, int version, byte[] bytes) implements Spec {
        public Content content() {
            return Content.structured(schema, version, bytes);
        }

        @Override
        public String toString() {
            return "Structured[" + schema + "@" + version + ", " + HexFormat.of().formatHex(bytes) + "]";
        }
    }

    /**
     * The model of "the same content": the same factory with equal arguments. Built-in types
     * never equal each other or a structured type, whose names may not start with {@code inbox.}.
     */
    private static boolean sameContent(Spec a, Spec b) {
        if (a instanceof Int64 x && b instanceof Int64 y) {
            return x.value() == y.value();
        }
        if (a instanceof Text x && b instanceof Text y) {
            return x.text().equals(y.text());
        }
        if (a instanceof Bytes x && b instanceof Bytes y) {
            return Arrays.equals(x.bytes(), y.bytes());
        }
        if (a instanceof Structured x && b instanceof Structured y) {
            return x.schema().equals(y.schema()) && x.version() == y.version() && Arrays.equals(x.bytes(), y.bytes());
        }
        return false;
    }

    /** Bytes of the letters {@code a} and {@code b}, which are also what type names are made of. */
    private static Gen<byte[]> smallBytes() {
        return Generate.byteArrays(integers().between(0, 3), Generate.bytes((byte) 'a', (byte) 'b', (byte) 'a'));
    }

    private static Gen<Spec> specs() {
        Gen<Long> smallLongs = Generate.pick(List.of(0L, 1L, 7L, -1L, 256L, Long.MIN_VALUE, Long.MAX_VALUE));
        Gen<Spec> int64 = smallLongs.mix(longs().all(), 20).map(Int64::new);
        // Pieces of one to four UTF-8 bytes, a supplementary character among them.
        Gen<String> piece = Generate.pick(List.of("a", "b", "é", "€", "\uD83D\uDE00", "\u0000"));
        Gen<Spec> text = lists().of(piece).ofSizeBetween(0, 3).map(pieces -> (Spec) new Text(String.join("", pieces)));
        Gen<Spec> bytes = smallBytes().map(Bytes::new);
        Gen<String> schema = Generate.pick(List.of("a", "b", "ab", "ba", "aa", "shipment", "inbox-int64"));
        Gen<Integer> version = Generate.pick(List.of(1, 2, Integer.MAX_VALUE));
        Gen<Spec> structured = schema.zip(version, smallBytes(), Structured::new);
        return Generate.frequency(List.of(
                Pair.of(2, int64), Pair.of(2, text), Pair.of(2, bytes), Pair.of(3, structured)));
    }

    /**
     * Over every pair of a few random contents (each with itself, made anew, included): the
     * fingerprints, and their digests alone, are equal exactly when the model says the content is
     * the same, and so are {@link Content#equals}; equal content has equal hash codes.
     */
    @Test
    void fingerprintsAreEqualExactlyWhenTheContentIs() {
        qt().withExamples(2000)
                .forAll(lists().of(specs()).ofSizeBetween(1, 8))
                .checkAssert(specs -> {
                    for (Spec a : specs) {
                        for (Spec b : specs) {
                            Content left = a.content();
                            Content right = b.content();
                            boolean same = sameContent(a, b);
                            assertEquals(same, left.fingerprint().equals(right.fingerprint()), a + " against " + b);
                            // The digest alone covers the type too: it is what a row's content is known by.
                            assertEquals(same, Arrays.equals(left.fingerprint().digest(), right.fingerprint().digest()),
                                    "digests of " + a + " against " + b);
                            assertEquals(same, left.equals(right), a + " against " + b);
                            if (same) {
                                assertEquals(left.hashCode(), right.hashCode(), a + " against " + b);
                            }
                        }
                    }
                });
    }

    /**
     * A fingerprint depends on the content alone: it names the content's type, is 32 bytes under
     * encoding 1, is the same for the content an adapter restores from its type and bytes, and is
     * not changed by whatever the caller later does to the array it passed in or got out.
     */
    @Test
    void fingerprintDependsOnTheContentAlone() {
        Gen<byte[]> anyBytes = Generate.byteArrays(integers().between(0, 300),
                Generate.bytes(Byte.MIN_VALUE, Byte.MAX_VALUE, (byte) 0));
        qt().withExamples(1000)
                .forAll(specs(), anyBytes)
                .checkAssert((spec, random) -> {
                    Content content = spec.content();
                    Fingerprint fingerprint = content.fingerprint();
                    assertEquals(content.type(), fingerprint.contentType());
                    assertEquals(1, fingerprint.algorithm());
                    assertEquals(Fingerprint.DIGEST_LENGTH, fingerprint.digest().length);
                    assertEquals(fingerprint, Content.restore(content.type(), content.bytes()).fingerprint(), spec.toString());

                    byte[] handedOut = content.bytes();
                    Arrays.fill(handedOut, (byte) 'x');
                    assertEquals(fingerprint, content.fingerprint(), spec + ": after changing a copy of its bytes");

                    byte[] passedIn = random.clone();
                    Content opaque = Content.ofBytes(passedIn);
                    Content shipment = Content.structured("shipment", 1, passedIn);
                    Fingerprint opaquePrint = opaque.fingerprint();
                    Fingerprint shipmentPrint = shipment.fingerprint();
                    if (passedIn.length > 0) {
                        passedIn[0] ^= 1;
                    }
                    assertEquals(opaquePrint, opaque.fingerprint());
                    assertEquals(shipmentPrint, shipment.fingerprint());
                    assertEquals(opaquePrint, Content.ofBytes(random).fingerprint());
                    assertEquals(passedIn.length == 0,
                            opaquePrint.equals(Content.ofBytes(passedIn).fingerprint()), "one flipped bit");
                    assertNotEquals(opaquePrint, shipmentPrint, "same bytes, another type");
                    assertNotEquals(opaquePrint, Content.of(new String(random, StandardCharsets.ISO_8859_1)).fingerprint(),
                            "text is never opaque bytes");
                });
    }
}
