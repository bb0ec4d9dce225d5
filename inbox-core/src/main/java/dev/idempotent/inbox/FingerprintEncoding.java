package dev.idempotent.inbox;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Optional;

/**
 * The versioned encodings a {@link Fingerprint} digests. A new encoding is added as a new constant;
 * old ones stay, because rows written under them must still be compared under them.
 */
enum FingerprintEncoding {

    /**
     * SHA-256 over: the tag {@code "dev.idempotent.inbox/fingerprint/1"}, the type name (UTF-8,
     * length-prefixed), the type version, and the content bytes (length-prefixed).
     */
    V1(1) {
        private static final byte[] TAG = "dev.idempotent.inbox/fingerprint/1".getBytes(StandardCharsets.US_ASCII);

        @Override
        void update(MessageDigest digest, ContentType type, byte[] bytes) {
            byte[] name = utf8(type.name()); // first: a name it refuses leaves the digest untouched
            digest.update(TAG);
            digest.update(ByteBuffer.allocate(Integer.BYTES).putInt(name.length).array());
            digest.update(name);
            digest.update(ByteBuffer.allocate(Integer.BYTES + Long.BYTES).putInt(type.version())
                    .putLong(bytes.length).array());
            digest.update(bytes);
        }
    };

    /** The encoding new fingerprints are taken with. */
    static final FingerprintEncoding CURRENT = V1;

    private final int version;

    FingerprintEncoding(int version) {
        this.version = version;
    }

    /** The version number stored beside each digest. */
    int version() {
        return version;
    }

    /** The encoding with this version number, if this library knows it. */
    static Optional<FingerprintEncoding> of(int version) {
        for (FingerprintEncoding encoding : values()) {
            if (encoding.version == version) {
                return Optional.of(encoding);
            }
        }
        return Optional.empty();
    }

    /**
     * Feeds {@code digest} the encoding of {@code bytes} of {@code type}, piece by piece: the
     * content is digested where it lies, not copied into one array first.
     */
    abstract void update(MessageDigest digest, ContentType type, byte[] bytes);

    /**
     * {@code text} as UTF-8, refusing what has no UTF-8 form. {@code String.getBytes} would put a
     * {@code ?} in place of an unpaired surrogate, and two different texts would digest alike; with
     * none, it gives exactly the UTF-8 form, without an encoder made for each call.
     */
    static byte[] utf8(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("text has no UTF-8 form: it holds an unpaired surrogate at index " + i);
            }
        }
        return text.getBytes(StandardCharsets.UTF_8);
    }

    // One digest per thread: MessageDigest.getInstance looks the algorithm up among the providers
    // and builds it reflectively, a cost on every message; digest() leaves it reset for the next.
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    });

    /** The fingerprint of {@code bytes} of {@code type} under this encoding. */
    Fingerprint fingerprint(ContentType type, byte[] bytes) {
        MessageDigest digest = SHA_256.get();
        update(digest, type, bytes);
        return new Fingerprint(version, type, digest.digest());
    }
}
