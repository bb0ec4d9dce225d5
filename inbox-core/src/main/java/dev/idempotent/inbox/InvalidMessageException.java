package dev.idempotent.inbox;

import java.util.Objects;

/**
 * The id or content was refused before any transaction began; nothing was written. Resending the
 * same message will be refused again.
 */
public final class InvalidMessageException extends InboxException {

    /** What was wrong with the message. */
    public enum Problem {
        ID_MISSING,
        ID_BLANK,
        ID_TOO_LONG,
        /** The id holds a control character, which has no place in an id and breaks logs. */
        ID_CONTROL_CHARACTER,
        /** The id holds an unpaired surrogate, which has no stable stored form. */
        ID_MALFORMED,
        CONTENT_MISSING,
        CONTENT_TOO_LARGE
    }

    private final Problem problem;

    public InvalidMessageException(Problem problem, String message) {
        super(message);
        this.problem = Objects.requireNonNull(problem, "problem");
    }

    /** What was wrong, for callers that map it to a protocol error. */
    public Problem problem() {
        return problem;
    }
}
