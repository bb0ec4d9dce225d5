package dev.idempotent.inbox;

import dev.idempotent.inbox.InvalidMessageException.Problem;

/**
 * The rule every business id obeys, for code that wants to refuse a bad id before it reaches an
 * inbox (a protocol parser, a consumer that dead-letters at once): not null, not blank, at most
 * {@value #MAX_LENGTH} Unicode code points, no control characters, no unpaired surrogates.
 * {@link Inbox#apply} applies the same rule.
 */
public final class MessageIds {

    /** The longest id, in Unicode code points. */
    public static final int MAX_LENGTH = 255;

    private MessageIds() {}

    /**
     * Refuses an id that breaks the rule. The message quotes no part of the id, since a refused
     * id may be anything.
     *
     * @param id the id to check; may be {@code null}, which is refused
     * @throws InvalidMessageException whose {@link InvalidMessageException#problem()} says what is
     *     wrong
     */
    public static void check(String id) {
        if (id == null) {
            throw new InvalidMessageException(Problem.ID_MISSING, "id is missing");
        }
        if (id.isBlank()) {
            throw new InvalidMessageException(Problem.ID_BLANK, "id is blank");
        }
        int length = 0;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < id.length() && Character.isLowSurrogate(id.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new InvalidMessageException(Problem.ID_MALFORMED, "id holds an unpaired surrogate at index " + i);
            } else if (Character.isISOControl(c)) {
                throw new InvalidMessageException(
                        Problem.ID_CONTROL_CHARACTER, "id holds a control character at index " + i);
            }
            if (++length > MAX_LENGTH) {
                throw new InvalidMessageException(Problem.ID_TOO_LONG, "id is longer than " + MAX_LENGTH + " characters");
            }
        }
    }

    /**
     * Whether {@code id} obeys the rule.
     *
     * @param id the id to check; may be {@code null}
     * @return {@code true} if {@link #check(String)} would accept it
     */
    public static boolean isValid(String id) {
        try {
            check(id);
            return true;
        } catch (InvalidMessageException e) {
            return false;
        }
    }
}
