package dev.idempotent.inbox;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A digest of one message's content, stored with its id so a later delivery of the same id can be
 * told apart as a duplicate (same content) or a conflict (different content) without keeping the
 * content itself.
 *
 * <p>A fingerprint only compares content under <em>one</em> id. It never decides whether two ids
 * are the same business: two orders with equal content and different ids are two businesses, and
 * deciding what the id of a business is remains the sender's duty.
 *
 * <p>The digest is SHA-256 over a versioned encoding of the content type and the canonical bytes.
 * The encoding's version ({@link #algorithm()}) is stored beside the digest, so a row written by an
 * older encoding is recomputed under that encoding when compared, never silently taken for a
 * conflict.
 *
 * @param algorithm the version of the fingerprint encoding
 * @param contentType the type of the content the digest was taken from
 * @param digest the 32-byte SHA-256 digest; copied on the way in and out
 */
public record Fingerprint(int algorithm, ContentType contentType, byte[] digest) {

    /** The length of a SHA-256 digest in bytes. */
    public static final int DIGEST_LENGTH = 32;

    /**
     * Checks the components and copies the digest.
     *
     * @param algorithm the version of the fingerprint encoding
     * @param contentType the type of the content the digest was taken from
     * @param digest the 32-byte SHA-256 digest; copied on the way in and out
     * @throws IllegalArgumentException if the algorithm is below 1 or the digest is not
     *     {@value #DIGEST_LENGTH} bytes long
     */
    public Fingerprint {
        Objects.requireNonNull(contentType, "contentType");
        Objects.requireNonNull(digest, "digest");
        if (algorithm < 1) {
            throw new IllegalArgumentException("fingerprint algorithm must be at least 1, was " + algorithm);
        }
        if (digest.length != DIGEST_LENGTH) {
            throw new IllegalArgumentException(
                    "fingerprint digest must be " + DIGEST_LENGTH + " bytes, was " + digest.length);
        }
        digest = digest.clone();
    }

    /** {@return a copy of the digest} */
    @Override
    public byte[] digest() {
        return digest.clone();
    }

    /** {@return the digest as lower-case hex} */
    public String hex() {
        return HexFormat.of().formatHex(digest);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Fingerprint that
                && algorithm == that.algorithm
                && contentType.equals(that.contentType)
                && Arrays.equals(digest, that.digest);
    }

    @Override
    public int hashCode() {
        return Objects.hash(algorithm, contentType, Arrays.hashCode(digest));
    }

    /** For example {@code v1:inbox.int64@1:4b2c…}: the digest shortened, since logs need no more. */
    @Override
    public String toString() {
        return "v" + algorithm + ":" + contentType + ":" + hex().substring(0, 12) + "…";
    }
}
