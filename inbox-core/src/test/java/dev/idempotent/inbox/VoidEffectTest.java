package dev.idempotent.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Which {@code apply} a call site reaches. Most of the checking is done by the compiler: every call
 * below must compile without an ambiguity error and with the outcome type it is assigned to. The
 * assertions then check that each form reached the overload it should have, through a small
 * in-memory inbox that runs an effect for a new id only.
 */
class VoidEffectTest {

    /** The handle effects receive here: counts the statements run through it. */
    static final class Ledger {
        int statements;

        int execute(String sql) {
            statements++;
            return 1;
        }

        void touch() {
            statements++;
        }

        static int countRow(Ledger ledger) {
            return ledger.execute("UPDATE");
        }

        static void touchRow(Ledger ledger) {
            ledger.touch();
        }
    }

    private final Ledger ledger = new Ledger();
    private final Inbox<Ledger> inbox = new OnceInbox(ledger);

    @Test
    void expressionLambdaKeepsTheStatementsResult() {
        Outcome<Integer> outcome = inbox.apply("snack-7", Content.of(7), tx -> tx.execute("UPDATE"));

        assertEquals(1, assertInstanceOf(Outcome.Applied.class, outcome).result());
        assertEquals(1, ledger.statements);
    }

    @Test
    void statementLambdaIsAppliedOnceWithAVoidOutcome() {
        Outcome<Void> first = inbox.apply("snack-7", Content.of(7), tx -> {
            tx.execute("UPDATE");
        });
        Outcome<Void> again = inbox.apply("snack-7", Content.of(7), tx -> {
            tx.execute("UPDATE");
        });

        assertNull(assertInstanceOf(Outcome.Applied.class, first).result());
        assertInstanceOf(Outcome.Duplicate.class, again);
        assertEquals(1, ledger.statements, "the duplicate did not run its effect");
    }

    @Test
    void explicitlyTypedLambdasAndMethodReferencesReachTheSameOverloads() {
        Outcome<Integer> typedValue = inbox.apply("a", Content.of(1), (Ledger tx) -> tx.execute("UPDATE"));
        Outcome<Void> typedVoid = inbox.apply("b", Content.of(1), (Ledger tx) -> {
            tx.touch();
        });
        Outcome<Integer> valueReference = inbox.apply("c", Content.of(1), Ledger::countRow);
        Outcome<Void> voidReference = inbox.apply("d", Content.of(1), Ledger::touchRow);

        assertEquals(1, assertInstanceOf(Outcome.Applied.class, typedValue).result());
        assertNull(assertInstanceOf(Outcome.Applied.class, typedVoid).result());
        assertEquals(1, assertInstanceOf(Outcome.Applied.class, valueReference).result());
        assertNull(assertInstanceOf(Outcome.Applied.class, voidReference).result());
        assertEquals(4, ledger.statements);
    }

    @Test
    void effectsHeldInVariablesKeepTheirTypes() {
        Effect<Ledger, String, RuntimeException> named = tx -> "done";
        VoidEffect<Ledger, RuntimeException> unnamed = Ledger::touch;

        Outcome<String> value = inbox.apply("a", Content.of(1), named);
        Outcome<Void> nothing = inbox.apply("b", Content.of(1), unnamed);
        Outcome<Void> returningNull = inbox.apply("c", Content.of(1), tx -> {
            tx.touch();
            return null;
        });

        assertEquals("done", assertInstanceOf(Outcome.Applied.class, value).result());
        assertNull(assertInstanceOf(Outcome.Applied.class, nothing).result());
        assertNull(assertInstanceOf(Outcome.Applied.class, returningNull).result());
        assertEquals(2, ledger.statements);
    }

    @Test
    void voidEffectPassesItsCheckedExceptionThroughUnchanged() {
        IOException failure = new IOException("disk");

        IOException thrown = assertThrows(IOException.class, () -> applyFailing(failure));

        assertSame(failure, thrown);
    }

    /** Compiles only because the void form's exception type is inferred from its body. */
    private void applyFailing(IOException failure) throws IOException {
        inbox.apply("snack-7", Content.of(7), tx -> {
            tx.touch();
            if (tx.statements > 0) {
                throw failure;
            }
        });
    }

    /** Runs an effect for a new id only, answering Applied or Duplicate; enough to tell overloads apart. */
    private static final class OnceInbox implements Inbox<Ledger> {
        private static final Instant RECEIVED = Instant.parse("2026-01-05T10:00:00Z");

        private final Ledger ledger;
        private final Set<String> seen = new HashSet<>();

        OnceInbox(Ledger ledger) {
            this.ledger = ledger;
        }

        @Override
        public <R, X extends Exception> Outcome<R> apply(
                String id, Content content, Instant originTime, Effect<Ledger, R, X> effect) throws X {
            if (seen.contains(id)) {
                return new Outcome.Duplicate<>(id, RECEIVED, content.fingerprint());
            }
            R result = effect.apply(ledger);
            seen.add(id);
            return new Outcome.Applied<>(id, result, RECEIVED);
        }

        @Override
        public <R, X extends Exception> List<MessageResult<R>> applyAll(
                List<Message> messages, MessageEffect<Ledger, R, X> effect, BatchCompletion<Ledger, R> completion) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <R, X extends Exception> PendingOutcome<R> applyJoined(
                Ledger transaction, String id, Content content, Instant originTime, Effect<Ledger, R, X> effect) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <R> ResultInbox<Ledger, R> storingResults(ResultCodec<R> codec) {
            throw new UnsupportedOperationException();
        }

        @Override
        public InboxRetention retention() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<InboxRecord> find(String id) {
            throw new UnsupportedOperationException();
        }

        @Override
        public String name() {
            return "once";
        }

        @Override
        public InboxTables tables() {
            return InboxTables.defaults();
        }

        @Override
        public InboxStats stats() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
    }
}
