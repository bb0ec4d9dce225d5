package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class OutcomeTest {

    private static final Instant T = Instant.parse("2026-01-05T10:00:00Z");
    private static final Fingerprint SEVEN = Content.of(7).fingerprint();
    private static final Fingerprint EIGHT = Content.of(8).fingerprint();

    @Test
    void newlyAppliedAndAcceptedAreDifferentQuestions() {
        Outcome<String> applied = new Outcome.Applied<>("snack-7", "done", T);
        Outcome<String> duplicate = new Outcome.Duplicate<>("snack-7", T, SEVEN);
        Outcome<String> conflict = new Outcome.Conflict<>("snack-7", T, SEVEN, EIGHT);

        assertTrue(applied.isNewlyApplied());
        assertTrue(applied.isAccepted());
        assertFalse(duplicate.isNewlyApplied());
        assertTrue(duplicate.isAccepted(), "a duplicate must be acknowledged");
        assertFalse(conflict.isNewlyApplied());
        assertFalse(conflict.isAccepted());
    }

    @Test
    void foldChoosesTheFunctionOfTheKind() {
        assertEquals("applied:done", new Outcome.Applied<>("a", "done", T)
                .fold(a -> "applied:" + a.result(), d -> "duplicate", c -> "conflict"));
        assertEquals("duplicate", new Outcome.Duplicate<String>("a", T, SEVEN)
                .fold(a -> "applied", d -> "duplicate", c -> "conflict"));
        assertEquals("conflict", new Outcome.Conflict<String>("a", T, SEVEN, EIGHT)
                .fold(a -> "applied", d -> "duplicate", c -> "conflict"));
    }

    @Test
    void appliedMayCarryANullResultButNoNullId() {
        assertEquals(null, new Outcome.Applied<Void>("a", null, T).result());
        assertThrows(NullPointerException.class, () -> new Outcome.Applied<>(null, "x", T));
        assertThrows(NullPointerException.class, () -> new Outcome.Conflict<>("a", T, SEVEN, null));
    }
}
