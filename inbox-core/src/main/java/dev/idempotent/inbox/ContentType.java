package dev.idempotent.inbox;

import java.util.Objects;

/**
 * The kind of bytes a {@link Content} holds: a name and a version of its canonical form. Part of
 * every fingerprint, so the same bytes under two types never count as the same content, and a
 * {@link Outcome.Conflict} can tell a changed canonical form from changed business content.
 *
 * <p>Names starting with {@code inbox.} are reserved for the built-in types.
 *
 * @param name 1 to 100 characters, no control characters, no unpaired surrogates
 * @param version the version of the canonical form, at least 1
 */
public record ContentType(String name, int version) {

    /** A signed 64-bit integer, as {@link Content#of(long)} encodes it. */
    public static final ContentType INT64 = new ContentType("inbox.int64", 1);
    /** Text encoded as UTF-8, as {@link Content#of(String)} encodes it. */
    public static final ContentType UTF8 = new ContentType("inbox.utf8", 1);
    /** Opaque bytes, as {@link Content#ofBytes(byte[])} takes them. */
    public static final ContentType BYTES = new ContentType("inbox.bytes", 1);
    /**
     * A JSON value in the canonical form of RFC 8785 (the JSON Canonicalization Scheme), encoded
     * as UTF-8, as {@link Content#json(String)} makes it: object keys sorted by their UTF-16 code
     * units, no whitespace, numbers written as ECMAScript writes doubles, strings with the fewest
     * escapes. Version 1 is that form; another canonical form would come as another version.
     */
    public static final ContentType JSON = new ContentType("inbox.json", 1);

    static final String RESERVED_PREFIX = "inbox.";
    static final int MAX_NAME_LENGTH = 100;

    /**
     * Checks the name and version.
     *
     * @param name 1 to 100 characters, no control characters, no unpaired surrogates
     * @param version the version of the canonical form, at least 1
     * @throws IllegalArgumentException if the name is blank, too long or holds a control
     *     character, or the version is below 1
     * @throws InvalidMessageException with
     *     {@link InvalidMessageException.Problem#CONTENT_TYPE_MALFORMED} if the name holds an
     *     unpaired surrogate
     */
    public ContentType {
        Objects.requireNonNull(name, "name");
        if (name.isBlank() || name.length() > MAX_NAME_LENGTH || name.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException(
                    "content type name must be 1 to " + MAX_NAME_LENGTH + " characters without control characters");
        }
        if (!isWellFormed(name)) {
            throw new InvalidMessageException(InvalidMessageException.Problem.CONTENT_TYPE_MALFORMED,
                    "content type name holds an unpaired surrogate, which has no UTF-8 form");
        }
        if (version < 1) {
            throw new IllegalArgumentException("content type version must be at least 1, was " + version);
        }
    }

    private static boolean isWellFormed(String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    boolean isBuiltIn() {
        return name.startsWith(RESERVED_PREFIX);
    }

    @Override
    public String toString() {
        return name + "@" + version;
    }
}
