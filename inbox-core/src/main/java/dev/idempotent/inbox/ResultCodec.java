package dev.idempotent.inbox;

import java.util.Objects;

/**
 * Turns an effect's result into the bytes an inbox stores beside the record, and back, for an
 * inbox that {@linkplain Inbox#storingResults stores results}: a retry then gets the first call's
 * answer in its {@link Outcome.Duplicate}.
 *
 * <p>Like a {@link ContentType}, a codec has a type name and a version, stored with every result.
 * A stored result is decoded only by a codec of the same type name that {@linkplain #decodes
 * decodes its version}; any other is refused with a {@link StoredResultException}, never misread.
 * Raise the version when the encoded form changes in a way the old decoder cannot read, and make
 * the new codec decode the versions still stored (at most for the inbox's retention).
 *
 * <p>A {@code null} result never reaches the codec: the inbox stores it as the codec's type
 * without bytes and gives it back as {@code null}, which is not the same as no result stored.
 *
 * <p>Implementations must be thread-safe. {@link #encode} runs in the call's transaction, after
 * the effect; an exception it throws fails the call unchanged and rolls back the transaction (or
 * the message's savepoint). What {@link #encode} returns is what is stored: to encrypt or redact
 * it, use {@link #sealedWith}.
 *
 * @param <R> the result type
 */
@Beta
public interface ResultCodec<R> {

    /**
     * {@return the type name stored with each result}: 1 to 100 characters without control
     * characters or unpaired surrogates, such as {@code orders.Confirmation}; the same for every
     * version
     */
    String type();

    /** {@return the version this codec writes}: zero or more */
    int version();

    /**
     * Encodes a result for storing.
     *
     * @param result what the effect returned; never {@code null}
     * @return the bytes to store, not {@code null}; the inbox keeps this array and does not copy it
     */
    byte[] encode(R result);

    /**
     * Decodes a stored result, one this codec {@linkplain #decodes decodes}.
     *
     * @param bytes the stored bytes, never {@code null}
     * @param version the version the result was stored with
     * @return the result
     * @throws RuntimeException if the bytes cannot be read; the inbox reports it as a
     *     {@link StoredResultException} of kind {@link StoredResultException.Kind#UNREADABLE}. Its
     *     message should not quote the bytes: it may be logged.
     */
    R decode(byte[] bytes, int version);

    /**
     * Whether this codec reads results stored with {@code version}; by default only its own.
     *
     * @param version a stored result's version
     * @return true if {@link #decode} reads it
     */
    default boolean decodes(int version) {
        return version == version();
    }

    /**
     * This codec with its encoded bytes passed through {@code seal} before they are stored, and
     * through {@link ResultSeal#open} before they are decoded: to encrypt a sensitive result, or
     * keep only part of it. The type name and version stay this codec's; the stored form, and what
     * {@link Inbox#find} shows, is what {@link ResultSeal#seal} returned.
     *
     * @param seal what seals and opens the encoded bytes; not {@code null}
     * @return the sealing codec
     */
    default ResultCodec<R> sealedWith(ResultSeal seal) {
        Objects.requireNonNull(seal, "seal");
        ResultCodec<R> plain = this;
        return new ResultCodec<>() {
            @Override
            public String type() {
                return plain.type();
            }

            @Override
            public int version() {
                return plain.version();
            }

            @Override
            public byte[] encode(R result) {
                return Objects.requireNonNull(seal.seal(plain.encode(result)), "the seal returned null");
            }

            @Override
            public R decode(byte[] bytes, int version) {
                return plain.decode(Objects.requireNonNull(seal.open(bytes), "the seal's open returned null"), version);
            }

            @Override
            public boolean decodes(int version) {
                return plain.decodes(version);
            }

            @Override
            public String toString() {
                return "ResultCodec[" + plain + ", sealed]";
            }
        };
    }

    /**
     * A codec for results that are bytes already, stored as they are.
     *
     * @param type the type name, 1 to 100 characters without control characters or unpaired
     *     surrogates, checked by {@link Inbox#storingResults}
     * @param version the version, zero or more
     * @return the codec; it decodes only {@code version}
     */
    static ResultCodec<byte[]> bytes(String type, int version) {
        Objects.requireNonNull(type, "type");
        return new ResultCodec<>() {
            @Override
            public String type() {
                return type;
            }

            @Override
            public int version() {
                return version;
            }

            @Override
            public byte[] encode(byte[] result) {
                // A copy: the caller keeps its array, and may change it after the call returns.
                return result.clone();
            }

            @Override
            public byte[] decode(byte[] bytes, int storedVersion) {
                return bytes.clone();
            }

            @Override
            public String toString() {
                return "ResultCodec[bytes " + type + " v" + version + "]";
            }
        };
    }
}
