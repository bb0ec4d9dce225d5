package dev.idempotent.inbox;

import java.util.Arrays;
import java.util.Objects;

/**
 * An effect's result as the inbox stores it beside the record: the bytes its codec wrote, with the
 * codec's type name and version, so that a reader can tell whether it can decode them.
 *
 * @param type the codec's type name, such as {@code orders.Confirmation}
 * @param version the codec's version of that type
 * @param bytes what the codec wrote; {@code null} when the effect returned {@code null}, which is
 *     stored as such and is not the same as no result stored
 */
@Beta
public record EncodedResult(String type, int version, byte[] bytes) {

    /**
     * Checks the type name and version.
     *
     * @param type the codec's type name; not {@code null} or blank
     * @param version the codec's version; not negative
     * @param bytes what the codec wrote, or {@code null} for a stored {@code null}
     * @throws IllegalArgumentException if the name is blank or the version negative
     */
    public EncodedResult {
        Objects.requireNonNull(type, "type");
        if (type.isBlank()) {
            throw new IllegalArgumentException("a result's type name must not be blank");
        }
        if (version < 0) {
            throw new IllegalArgumentException("a result's type version must not be negative, was " + version);
        }
    }

    /** {@return whether the stored result is {@code null}} */
    public boolean isNull() {
        return bytes == null;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof EncodedResult that && type.equals(that.type) && version == that.version
                && Arrays.equals(bytes, that.bytes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, version) * 31 + Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        // Never the bytes: a result is business data, and logs carry ids.
        return "EncodedResult[type=" + type + ", version=" + version
                + (bytes == null ? ", null" : ", " + bytes.length + " bytes") + "]";
    }
}
