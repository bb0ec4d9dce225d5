package dev.idempotent.inbox;

import java.util.Objects;
import java.util.Optional;

/**
 * The result a {@link Outcome.Duplicate} found stored with its record: none (the record was
 * applied without storing results, or before they were stored), or a result as the first call's
 * {@link ResultCodec} stored it, decoded when the call gave a codec for it
 * ({@link Inbox#storingResults}).
 *
 * <pre>{@code
 * if (outcome instanceof Outcome.Duplicate<Confirmation> duplicate && duplicate.result().isDecoded()) {
 *     return duplicate.result().value(); // the first call's answer; may be null
 * }
 * }</pre>
 *
 * <p>{@link #toString()} names the type, version and size only, never the result.
 *
 * @param <R> the result type
 */
@Beta
public final class StoredResult<R> {

    private static final StoredResult<?> NONE = new StoredResult<>(null, false, null);

    private final EncodedResult encoded;
    private final boolean decoded;
    private final R value;

    private StoredResult(EncodedResult encoded, boolean decoded, R value) {
        this.encoded = encoded;
        this.decoded = decoded;
        this.value = value;
    }

    /**
     * No result stored.
     *
     * @param <R> the result type
     * @return the one empty value
     */
    @SuppressWarnings("unchecked")
    public static <R> StoredResult<R> none() {
        return (StoredResult<R>) NONE;
    }

    /**
     * A stored result the call had no codec for: its bytes are reachable through {@link #encoded()}.
     *
     * @param <R> the result type
     * @param encoded the result as stored; not {@code null}
     * @return the stored result
     */
    public static <R> StoredResult<R> undecoded(EncodedResult encoded) {
        return new StoredResult<>(Objects.requireNonNull(encoded, "encoded"), false, null);
    }

    /**
     * A stored result and what the call's codec decoded from it.
     *
     * @param <R> the result type
     * @param encoded the result as stored; not {@code null}
     * @param value the decoded result; {@code null} when a {@code null} was stored
     * @return the stored result
     */
    public static <R> StoredResult<R> decoded(EncodedResult encoded, R value) {
        return new StoredResult<>(Objects.requireNonNull(encoded, "encoded"), true, value);
    }

    /** {@return whether a result was stored}, a {@code null} one included */
    public boolean isStored() {
        return encoded != null;
    }

    /** {@return whether the stored result was decoded}: then {@link #value()} gives it */
    public boolean isDecoded() {
        return decoded;
    }

    /** {@return the result as stored}: the codec's type name, version and bytes; empty for none */
    public Optional<EncodedResult> encoded() {
        return Optional.ofNullable(encoded);
    }

    /**
     * The decoded result.
     *
     * @return what the first call's effect returned, as its codec decoded it; {@code null} when it
     *     returned {@code null}
     * @throws IllegalStateException when no result was stored, or it was not decoded (the call
     *     gave no codec: use {@link Inbox#storingResults})
     */
    public R value() {
        if (!decoded) {
            throw new IllegalStateException(encoded == null
                    ? "no result was stored with this record"
                    : "the stored result (" + encoded.type() + " v" + encoded.version() + ") was not decoded:"
                            + " the call gave no codec; apply through inbox.storingResults(codec)");
        }
        return value;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof StoredResult<?> that && Objects.equals(encoded, that.encoded)
                && decoded == that.decoded && Objects.deepEquals(value, that.value);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(encoded) * 31 + Boolean.hashCode(decoded);
    }

    @Override
    public String toString() {
        // Never the value nor the bytes: a result is business data, and logs carry ids.
        if (encoded == null) {
            return "StoredResult[none]";
        }
        return "StoredResult[" + encoded.type() + " v" + encoded.version()
                + (encoded.isNull() ? ", null" : ", " + encoded.bytes().length + " bytes")
                + (decoded ? ", decoded" : ", not decoded") + "]";
    }
}
