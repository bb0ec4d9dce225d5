package dev.idempotent.inbox;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * What "the same business content" means for one id: a {@link ContentType} and canonical bytes.
 *
 * <p>Two deliveries of one id are duplicates when their contents have equal fingerprints, and a
 * conflict otherwise. JSON is canonicalised by {@link #json(String)}, so that key order,
 * whitespace and number spelling do not turn a resend into a conflict. For other structured
 * content the sender must produce canonical bytes (a stable field order and number format, for
 * instance) and name the schema and its version, so that a change of canonical form shows as a
 * {@linkplain Outcome.Conflict#contentTypeChanged() type change} instead of passing for changed
 * business.
 *
 * <p>Content is immutable; factories copy the bytes they are given.
 */
public final class Content {

    private final ContentType type;
    private final byte[] bytes;

    private Content(ContentType type, byte[] bytes) {
        this.type = type;
        this.bytes = bytes;
    }

    /**
     * An integer quantity, the seed's case: {@code Content.of(7)}.
     *
     * @param value the quantity
     * @return the content, of type {@link ContentType#INT64}
     */
    public static Content of(long value) {
        return new Content(ContentType.INT64, ByteBuffer.allocate(Long.BYTES).putLong(value).array());
    }

    /**
     * Text, compared as its UTF-8 bytes.
     *
     * @param text the text; not {@code null}
     * @return the content, of type {@link ContentType#UTF8}
     * @throws NullPointerException if {@code text} is {@code null}
     * @throws IllegalArgumentException if the text holds an unpaired surrogate, which has no
     *     UTF-8 form and would otherwise make two different texts look equal
     */
    public static Content of(String text) {
        Objects.requireNonNull(text, "text");
        return new Content(ContentType.UTF8, FingerprintEncoding.utf8(text));
    }

    /**
     * Opaque bytes, compared byte for byte.
     *
     * @param bytes the bytes, copied; not {@code null}
     * @return the content, of type {@link ContentType#BYTES}
     * @throws NullPointerException if {@code bytes} is {@code null}
     */
    public static Content ofBytes(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        return new Content(ContentType.BYTES, bytes.clone());
    }

    /**
     * A JSON value, compared by its RFC 8785 canonical form (the JSON Canonicalization Scheme):
     * object keys sorted, no whitespace, each number as the shortest form of its double, each
     * string with the fewest escapes. So {@code {"qty": 1e2, "item": "crisps"}} and
     * {@code {"item":"crisps","qty":100}} are the same content, and any change of a key or a value
     * makes a different one. The type is {@link ContentType#JSON}; the bytes kept are the
     * canonical form, as UTF-8. Any JSON value may stand at the top, not only an object.
     *
     * <p>Text without a single canonical form is refused, never altered, because an altered
     * content could make a changed message pass for a duplicate: text that is not JSON by
     * RFC 8259, a duplicate key in one object, a string with an unpaired surrogate, objects and
     * arrays nested more than 100 deep, and a number that a double cannot hold as written (more
     * than 17 significant digits, {@code 9007199254740993}, {@code 1e400}, {@code 1e-400}), and a
     * number other than 0 below the smallest normal double in magnitude
     * ({@code 2.2250738585072014e-308}). Send such numbers as strings.
     *
     * @param json the JSON text
     * @return the content, in canonical form
     * @throws InvalidMessageException with {@link InvalidMessageException.Problem#CONTENT_MALFORMED}
     *     for text that is refused; its message gives a reason and an index, never the content
     */
    public static Content json(String json) {
        Objects.requireNonNull(json, "json");
        return new Content(ContentType.JSON, CanonicalJson.canonicalize(json));
    }

    /**
     * Like {@link #json(String)}, for JSON text as UTF-8 bytes, as it arrives in a request body.
     * Bytes that are not UTF-8, and a leading byte-order mark, are refused as well.
     *
     * @param utf8 the JSON text, UTF-8 encoded
     * @return the content, in canonical form
     * @throws InvalidMessageException with {@link InvalidMessageException.Problem#CONTENT_MALFORMED}
     *     for bytes that are refused
     */
    public static Content json(byte[] utf8) {
        Objects.requireNonNull(utf8, "utf8");
        return new Content(ContentType.JSON, CanonicalJson.canonicalize(utf8));
    }

    /**
     * Structured content in a canonical form the caller defines.
     *
     * @param schema the schema's name, for example {@code "shipment"}; not starting with
     *     {@code inbox.}
     * @param version the version of the canonical form, at least 1
     * @param canonicalBytes the content in that canonical form, copied; not {@code null}
     * @return the content, of type {@code schema@version}
     * @throws IllegalArgumentException if the schema name is reserved, blank, too long or holds a
     *     control character, or the version is below 1
     * @throws InvalidMessageException if the schema name holds an unpaired surrogate
     */
    public static Content structured(String schema, int version, byte[] canonicalBytes) {
        ContentType type = new ContentType(schema, version);
        if (type.isBuiltIn()) {
            throw new IllegalArgumentException(
                    "schema names starting with '" + ContentType.RESERVED_PREFIX + "' are reserved: " + schema);
        }
        Objects.requireNonNull(canonicalBytes, "canonicalBytes");
        return new Content(type, canonicalBytes.clone());
    }

    /**
     * Content as an adapter read it back from storage: a type and bytes recorded earlier.
     * Applications use the other factories.
     *
     * @param type the recorded type; not {@code null}
     * @param bytes the recorded bytes, copied; not {@code null}
     * @return the content
     */
    static Content restore(ContentType type, byte[] bytes) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(bytes, "bytes");
        return new Content(type, bytes.clone());
    }

    /** {@return the content's type} */
    public ContentType type() {
        return type;
    }

    /** {@return a copy of the canonical bytes} */
    public byte[] bytes() {
        return bytes.clone();
    }

    /** {@return the number of canonical bytes}, which the inbox's size limit applies to. */
    public int size() {
        return bytes.length;
    }

    /** {@return the fingerprint under the current encoding} */
    public Fingerprint fingerprint() {
        return FingerprintEncoding.CURRENT.fingerprint(type, bytes);
    }

    /**
     * The fingerprint under an older encoding, to compare this content with a fingerprint stored
     * under that encoding.
     *
     * @param algorithm the encoding's version, as {@link Fingerprint#algorithm()} holds it
     * @return the fingerprint, or empty if this library does not know that encoding (a newer one)
     */
    public Optional<Fingerprint> fingerprintUnder(int algorithm) {
        return FingerprintEncoding.of(algorithm).map(encoding -> encoding.fingerprint(type, bytes));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Content that && type.equals(that.type) && Arrays.equals(bytes, that.bytes);
    }

    @Override
    public int hashCode() {
        return 31 * type.hashCode() + Arrays.hashCode(bytes);
    }

    /** Names the type and size only: content never goes to logs. */
    @Override
    public String toString() {
        return "Content[" + type + ", " + bytes.length + " bytes]";
    }
}
