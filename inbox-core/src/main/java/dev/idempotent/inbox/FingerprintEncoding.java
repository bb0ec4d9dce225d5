package dev.idempotent.inbox;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
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
        @Override
        byte[] encode(ContentType type, byte[] bytes) {
            byte[] tag = "dev.idempotent.inbox/fingerprint/1".getBytes(StandardCharsets.US_ASCII);
            byte[] name = utf8(type.name());
            return ByteBuffer.allocate(tag.length + Integer.BYTES + name.length + Integer.BYTES + Long.BYTES + bytes.length)
                    .put(tag)
                    .putInt(name.length)
                    .put(name)
                    .putInt(type.version())
                    .putLong(bytes.length)
                    .put(bytes)
                    .array();
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

    abstract byte[] encode(ContentType type, byte[] bytes);

    /**
     * {@code text} as UTF-8, refusing what has no UTF-8 form. {@code String.getBytes} would put a
     * {@code ?} in place of an unpaired surrogate, and two different texts would digest alike.
     */
    static byte[] utf8(String text) {
        try {
            ByteBuffer encoded = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(text));
            return Arrays.copyOf(encoded.array(), encoded.limit());
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("text has no UTF-8 form: it holds an unpaired surrogate", e);
        }
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
        byte[] digest = SHA_256.get().digest(encode(type, bytes));
        return new Fingerprint(version, type, digest);
    }
}
