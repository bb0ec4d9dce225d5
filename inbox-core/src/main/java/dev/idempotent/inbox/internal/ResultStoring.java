package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.MessageEffect;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.StoredResult;
import dev.idempotent.inbox.StoredResultException;
import java.util.Objects;
import java.util.Optional;

/**
 * How a call asks the engine to store its result: its effect, wrapped with the codec in a
 * {@link StoringEffect} (or {@link StoringMessageEffect}) that the engine recognises, unwraps and
 * runs; and the encoding and decoding rules, in one place for the engine and the views.
 *
 * <p>The view hands the marked effect to the engine's public methods, which keep their
 * observation, counting and validation in one place. Should a marked effect ever run as a plain
 * one, it refuses, so the call fails with nothing recorded rather than applying without storing
 * its result.
 */
final class ResultStoring {

    /** The longest type name: a content type's, as the column is alike. */
    private static final int MAX_TYPE_LENGTH = 100;

    private ResultStoring() {
    }

    /**
     * Checks a codec's type name and version.
     *
     * @param type the type name
     * @param version the version
     * @throws IllegalArgumentException if either is out of range
     */
    static void checkType(String type, int version) {
        if (type == null || type.isBlank() || type.length() > MAX_TYPE_LENGTH
                || type.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("a result codec's type name must be 1 to " + MAX_TYPE_LENGTH
                    + " characters without control characters");
        }
        // An unpaired surrogate has no UTF-8 form: the database would store a '?' in its place, and
        // the codec's own results would then read back as another type, refused on every duplicate.
        for (int i = 0; i < type.length(); i++) {
            char c = type.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < type.length() && Character.isLowSurrogate(type.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("a result codec's type name holds an unpaired surrogate at index " + i);
            }
        }
        if (version < 0) {
            throw new IllegalArgumentException("a result codec's version must not be negative, was " + version);
        }
    }

    /**
     * {@code effect}, marked for the engine to store its result with {@code codec}.
     *
     * @param <H> the handle type
     * @param <R> the result type
     * @param <X> the effect's exception
     * @param codec the codec
     * @param effect the user's effect
     * @return the marked effect
     */
    static <H, R, X extends Exception> Effect<H, R, X> effect(ResultCodec<R> codec, Effect<H, R, X> effect) {
        return new StoringEffect<>(codec, effect);
    }

    /**
     * {@code effect}, marked for the engine to store each message's result with {@code codec}.
     *
     * @param <H> the handle type
     * @param <R> the result type
     * @param <X> the effect's exception
     * @param codec the codec
     * @param effect the user's effect
     * @return the marked effect
     */
    static <H, R, X extends Exception> MessageEffect<H, R, X> messageEffect(
            ResultCodec<R> codec, MessageEffect<H, R, X> effect) {
        return new StoringMessageEffect<>(codec, effect);
    }

    /** An effect whose result the engine stores with {@link #codec}. */
    record StoringEffect<H, R, X extends Exception>(ResultCodec<R> codec, Effect<H, R, X> effect)
            implements Effect<H, R, X> {

        StoringEffect {
            Objects.requireNonNull(codec, "codec");
            Objects.requireNonNull(effect, "effect");
        }

        @Override
        public R apply(H tx) {
            throw hidden();
        }
    }

    /** A batch's effect whose results the engine stores with {@link #codec}. */
    record StoringMessageEffect<H, R, X extends Exception>(ResultCodec<R> codec, MessageEffect<H, R, X> effect)
            implements MessageEffect<H, R, X> {

        StoringMessageEffect {
            Objects.requireNonNull(codec, "codec");
            Objects.requireNonNull(effect, "effect");
        }

        @Override
        public R apply(H tx, dev.idempotent.inbox.Message message) {
            throw hidden();
        }
    }

    private static InboxException hidden() {
        return new InboxException("an effect that stores its result reached the engine wrapped in another: the inbox"
                + " implementation between the result view and the engine does not pass effects on unchanged, so the"
                + " result could not be stored; nothing was recorded");
    }

    /**
     * Encodes a result for storing, within the size limit.
     *
     * @param <R> the result type
     * @param codec the codec
     * @param result what the effect returned, or {@code null}
     * @param maxBytes the limit
     * @param inbox the inbox's name, for the message
     * @param id the id, for the message
     * @return the result to store
     * @throws StoredResultException of kind TOO_LARGE
     */
    static <R> EncodedResult encode(ResultCodec<R> codec, R result, int maxBytes, String inbox, String id) {
        if (result == null) {
            return new EncodedResult(codec.type(), codec.version(), null);
        }
        byte[] bytes = Objects.requireNonNull(codec.encode(result), "the result codec returned null");
        if (bytes.length > maxBytes) {
            throw new StoredResultException(StoredResultException.Kind.TOO_LARGE, "inbox '" + inbox + "' id '" + id
                    + "': the result (" + codec.type() + " v" + codec.version() + ") encodes to " + bytes.length
                    + " bytes, more than maxResultBytes " + maxBytes + "; nothing was recorded", null);
        }
        return new EncodedResult(codec.type(), codec.version(), bytes);
    }

    /**
     * Decodes a stored result with the call's codec, or refuses it by kind.
     *
     * @param <R> the result type
     * @param codec the call's codec
     * @param stored what is stored, or empty
     * @param inbox the inbox's name, for the message
     * @param id the id, for the message
     * @return the result, decoded; {@link StoredResult#none()} for none
     * @throws StoredResultException of kind OTHER_TYPE, UNSUPPORTED_VERSION or UNREADABLE
     */
    static <R> StoredResult<R> decode(ResultCodec<R> codec, Optional<EncodedResult> stored, String inbox,
            String id) {
        if (stored.isEmpty()) {
            return StoredResult.none();
        }
        EncodedResult encoded = stored.get();
        if (!encoded.type().equals(codec.type())) {
            throw new StoredResultException(StoredResultException.Kind.OTHER_TYPE, "inbox '" + inbox + "' id '" + id
                    + "' holds a result of type '" + encoded.type() + "' v" + encoded.version() + ", not of the codec's"
                    + " type '" + codec.type() + "'; it is not read", null);
        }
        if (!codec.decodes(encoded.version())) {
            throw new StoredResultException(StoredResultException.Kind.UNSUPPORTED_VERSION, "inbox '" + inbox
                    + "' id '" + id + "' holds a result of type '" + encoded.type() + "' v" + encoded.version()
                    + ", a version the codec (v" + codec.version() + ") does not decode; it is not read", null);
        }
        if (encoded.isNull()) {
            return StoredResult.decoded(encoded, null);
        }
        R value;
        try {
            value = codec.decode(encoded.bytes().clone(), encoded.version());
        } catch (RuntimeException e) {
            throw new StoredResultException(StoredResultException.Kind.UNREADABLE, "inbox '" + inbox + "' id '" + id
                    + "': the stored result of type '" + encoded.type() + "' v" + encoded.version() + " ("
                    + encoded.bytes().length + " bytes) could not be decoded: " + e.getClass().getName(), e);
        }
        return StoredResult.decoded(encoded, value);
    }
}
