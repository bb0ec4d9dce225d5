package dev.idempotent.inbox;

import dev.idempotent.inbox.internal.FingerprintEncoding;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * What "the same business content" means for one id: a {@link ContentType} and canonical bytes.
 *
 * <p>Two deliveries of one id are duplicates when their contents have equal fingerprints, and a
 * conflict otherwise. For structured content the sender must produce canonical bytes (a stable
 * field order and number format, for instance) and name the schema and its version, so that a
 * change of canonical form shows as a {@linkplain Outcome.Conflict#contentTypeChanged() type
 * change} instead of passing for changed business.
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
