package dev.idempotent.inbox;

import java.time.Instant;
import java.util.Objects;
import java.util.function.Function;

/**
 * What {@link Inbox#apply} did with one message: exactly one of {@link Applied},
 * {@link Duplicate} or {@link Conflict}.
 *
 * <p>Two questions are kept apart on purpose. {@link #isNewlyApplied()} asks whether this call ran
 * the effect; {@link #isAccepted()} asks whether the business is in place, which is what an
 * acknowledgement to the sender means. A duplicate is not newly applied but is accepted: answering
 * it with a failure would make the sender resend forever.
 *
 * <p>On Java 17 use {@link #fold} for an exhaustive answer, or {@code instanceof} patterns:
 *
 * <pre>{@code
 * int status = outcome.fold(applied -> 200, duplicate -> 200, conflict -> 409);
 * if (outcome instanceof Outcome.Duplicate<?> duplicate) {
 *     log.info("first received at {}", duplicate.firstReceivedAt());
 * }
 * }</pre>
 *
 * @param <R> the effect's result type
 */
public sealed interface Outcome<R> permits Outcome.Applied, Outcome.Duplicate, Outcome.Conflict {

    /** {@return the business id the outcome is for} */
    String id();

    /** {@return true only for {@link Applied}}: this call ran the effect and committed it. */
    boolean isNewlyApplied();

    /**
     * {@return true for {@link Applied} and {@link Duplicate}}: the business is in place;
     * acknowledge it.
     */
    boolean isAccepted();

    /**
     * Maps this outcome with the function for its kind; the compiler makes callers name all three.
     *
     * @param <T> what the functions return
     * @param onApplied called for {@link Applied}
     * @param onDuplicate called for {@link Duplicate}
     * @param onConflict called for {@link Conflict}
     * @return what the chosen function returned
     */
    <T> T fold(
            Function<? super Applied<R>, ? extends T> onApplied,
            Function<? super Duplicate<R>, ? extends T> onDuplicate,
            Function<? super Conflict<R>, ? extends T> onConflict);

    /**
     * The id was new: the effect ran and committed with the inbox record.
     *
     * @param id the business id
     * @param result what the effect returned; may be {@code null}
     * @param receivedAt the receive time recorded for the id
     */
    record Applied<R>(String id, R result, Instant receivedAt) implements Outcome<R> {
        /**
         * Checks that {@code id} and {@code receivedAt} are not {@code null}.
         *
         * @param id the business id
         * @param result what the effect returned; may be {@code null}
         * @param receivedAt the receive time recorded for the id
         * @throws NullPointerException if either is {@code null}
         */
        public Applied {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(receivedAt, "receivedAt");
        }

        @Override
        public boolean isNewlyApplied() {
            return true;
        }

        @Override
        public boolean isAccepted() {
            return true;
        }

        @Override
        public <T> T fold(
                Function<? super Applied<R>, ? extends T> onApplied,
                Function<? super Duplicate<R>, ? extends T> onDuplicate,
                Function<? super Conflict<R>, ? extends T> onConflict) {
            return onApplied.apply(this);
        }
    }

    /**
     * The id was recorded earlier with the same content: already applied, nothing done now.
     *
     * <p>{@link #result()} is what the first call stored as its result: none unless it was applied
     * through {@link Inbox#storingResults}; decoded when this call went through such a view too.
     *
     * @param id the business id
     * @param firstReceivedAt when the id was first recorded
     * @param fingerprint the stored fingerprint, which the offered content matched
     * @param result the result stored with the record, or {@link StoredResult#none()}
     */
    record Duplicate<R>(String id, Instant firstReceivedAt, Fingerprint fingerprint, StoredResult<R> result)
            implements Outcome<R> {
        /**
         * Checks that no component is {@code null}.
         *
         * @param id the business id
         * @param firstReceivedAt when the id was first recorded
         * @param fingerprint the stored fingerprint, which the offered content matched
         * @param result the result stored with the record, or {@link StoredResult#none()}
         * @throws NullPointerException if a component is {@code null}
         */
        public Duplicate {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(firstReceivedAt, "firstReceivedAt");
            Objects.requireNonNull(fingerprint, "fingerprint");
            Objects.requireNonNull(result, "result");
        }

        /**
         * A duplicate without a stored result, as every duplicate was before results were stored.
         *
         * @param id the business id
         * @param firstReceivedAt when the id was first recorded
         * @param fingerprint the stored fingerprint, which the offered content matched
         * @throws NullPointerException if a component is {@code null}
         */
        public Duplicate(String id, Instant firstReceivedAt, Fingerprint fingerprint) {
            this(id, firstReceivedAt, fingerprint, StoredResult.none());
        }

        @Override
        public boolean isNewlyApplied() {
            return false;
        }

        @Override
        public boolean isAccepted() {
            return true;
        }

        @Override
        public <T> T fold(
                Function<? super Applied<R>, ? extends T> onApplied,
                Function<? super Duplicate<R>, ? extends T> onDuplicate,
                Function<? super Conflict<R>, ? extends T> onConflict) {
            return onDuplicate.apply(this);
        }
    }

    /**
     * The id was recorded earlier with different content: refused, the earlier business is kept.
     *
     * @param id the business id
     * @param firstReceivedAt when the id was first recorded
     * @param stored the fingerprint recorded with the id
     * @param offered the fingerprint of the content offered now
     */
    record Conflict<R>(String id, Instant firstReceivedAt, Fingerprint stored, Fingerprint offered)
            implements Outcome<R> {
        /**
         * Checks that no component is {@code null}.
         *
         * @param id the business id
         * @param firstReceivedAt when the id was first recorded
         * @param stored the fingerprint recorded with the id
         * @param offered the fingerprint of the content offered now
         * @throws NullPointerException if a component is {@code null}
         */
        public Conflict {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(firstReceivedAt, "firstReceivedAt");
            Objects.requireNonNull(stored, "stored");
            Objects.requireNonNull(offered, "offered");
        }

        /**
         * {@return true when the two contents are of different {@link ContentType}s (or schema
         * versions)}: often a sender that changed its canonical form rather than a sender that
         * changed its mind.
         */
        public boolean contentTypeChanged() {
            return !stored.contentType().equals(offered.contentType());
        }

        @Override
        public boolean isNewlyApplied() {
            return false;
        }

        @Override
        public boolean isAccepted() {
            return false;
        }

        @Override
        public <T> T fold(
                Function<? super Applied<R>, ? extends T> onApplied,
                Function<? super Duplicate<R>, ? extends T> onDuplicate,
                Function<? super Conflict<R>, ? extends T> onConflict) {
            return onConflict.apply(this);
        }
    }
}
