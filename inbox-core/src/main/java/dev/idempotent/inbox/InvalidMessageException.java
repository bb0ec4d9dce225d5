package dev.idempotent.inbox;

import java.util.Objects;

/**
 * The id or content was refused before any transaction began; nothing was written. Resending the
 * same message will be refused again.
 */
public final class InvalidMessageException extends InboxException {

    /** What was wrong with the message. */
    public enum Problem {
        /** The id is {@code null}. */
        ID_MISSING,
        /** The id is empty or only white space. */
        ID_BLANK,
        /** The id is longer than 255 characters. */
        ID_TOO_LONG,
        /** The id holds a control character, which has no place in an id and breaks logs. */
        ID_CONTROL_CHARACTER,
        /** The id holds an unpaired surrogate, which has no stable stored form. */
        ID_MALFORMED,
        /** The content is {@code null}. */
        CONTENT_MISSING,
        /** The content is larger than the inbox's {@code maxContentBytes}. */
        CONTENT_TOO_LARGE,
        /**
         * The content type's name holds an unpaired surrogate, which has no UTF-8 form: two such
         * names could not be told apart in a fingerprint.
         */
        CONTENT_TYPE_MALFORMED,
        /**
         * The origin time is later than the inbox's clock plus its clock-skew margin. Accepting it
         * would let the message outlive the retention check: the stale check compares origins with
         * the horizon, and an origin in the future stays newer than any horizon for as long as it
         * is in the future.
         */
        ORIGIN_IN_FUTURE,
        /**
         * {@link Content#json(String)} was given text that has no single canonical form: not JSON,
         * not UTF-8, a duplicate key, an unpaired surrogate, a number a double would round, or
         * nesting too deep. Refused rather than altered, since an altered content could make a
         * changed message pass for a duplicate.
         */
        CONTENT_MALFORMED
    }

    /** What was wrong with the message. */
    private final Problem problem;

    /**
     * For the engine and adapters.
     *
     * @param problem what was wrong; not {@code null}
     * @param message what was wrong, naming the id where it is printable
     */
    public InvalidMessageException(Problem problem, String message) {
        super(message);
        this.problem = Objects.requireNonNull(problem, "problem");
    }

    /** {@return what was wrong}, for callers that map it to a protocol error. */
    public Problem problem() {
        return problem;
    }
}
