package dev.idempotent.inbox.mariadb.galera;

import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * Delivers messages the way a consumer does, through one of the inbox's four ways of calling it,
 * and resends each message after an error until the message is decided (Applied or Duplicate).
 * Every error is counted in the {@link CallerErrors}; one a caller may not retry is kept there for
 * the test to fail on, and the message is resent all the same, so that one run shows every kind of
 * error and still checks what was applied.
 */
final class Calls {

    /** How a consumer calls the inbox. */
    enum Mode {
        /** {@code apply}, one transaction per message. */
        APPLY,
        /** {@code applyAll}, the messages of a delivery in one transaction. */
        APPLY_ALL,
        /** {@code apply} on an inbox built with group commit. */
        GROUP,
        /** {@code applyJoined} in the caller's transaction, which the caller commits. */
        JOINED
    }

    /** Where one attempt goes: an inbox and, for joined calls, the Jdbi of the same node. */
    record Target(Inbox<Handle> inbox, Jdbi jdbi) {}

    private static final int MAX_ATTEMPTS = 2_000;

    private final Mode mode;
    private final CallerErrors errors;

    Calls(Mode mode, CallerErrors errors) {
        this.mode = mode;
        this.errors = errors;
    }

    /**
     * Delivers {@code messages} and returns each one's final outcome, in order; attempt {@code n}
     * (from 0) goes to {@code target.apply(n)}. The effect records a run of the message's id with
     * the qty its content holds.
     */
    List<Outcome<Integer>> deliver(List<Message> messages, IntFunction<Target> target) {
        Map<Message, Outcome<Integer>> decided = new LinkedHashMap<>();
        List<Message> pending = new ArrayList<>(messages);
        for (int attempt = 0; !pending.isEmpty(); attempt++) {
            if (attempt == MAX_ATTEMPTS) {
                throw new AssertionError(pending.size() + " messages still undecided after " + attempt
                        + " attempts, starting with " + pending.get(0).id());
            }
            Target to = target.apply(attempt);
            List<Message> next = new ArrayList<>();
            if (mode == Mode.APPLY_ALL) {
                attemptAll(to, pending, decided, next);
            } else {
                for (Message message : pending) {
                    Outcome<Integer> outcome = attemptOne(to, message);
                    if (outcome == null) {
                        next.add(message);
                    } else {
                        decided.put(message, outcome);
                    }
                }
            }
            pending = next;
        }
        List<Outcome<Integer>> outcomes = new ArrayList<>();
        for (Message message : messages) {
            outcomes.add(decided.get(message));
        }
        return outcomes;
    }

    private void attemptAll(Target to, List<Message> batch, Map<Message, Outcome<Integer>> decided, List<Message> next) {
        List<MessageResult<Integer>> results;
        try {
            results = to.inbox().applyAll(batch,
                    (tx, message) -> GaleraDatabase.recordRun(tx, message.id(), qty(message)));
        } catch (RuntimeException e) {
            check("applyAll", e, batch);
            next.addAll(batch);
            return;
        }
        for (MessageResult<Integer> result : results) {
            if (result.failure().isPresent()) {
                check("applyAll, one message", result.failure().get(), List.of(result.message()));
                next.add(result.message());
            } else {
                decided.put(result.message(), decided(result.outcome().orElseThrow(), result.message()));
            }
        }
    }

    /** The outcome of one attempt, or {@code null} after a retryable error. */
    private Outcome<Integer> attemptOne(Target to, Message message) {
        if (mode == Mode.JOINED) {
            return attemptJoined(to, message);
        }
        try {
            return decided(to.inbox().apply(message.id(), message.content(), message.originTime(),
                    tx -> GaleraDatabase.recordRun(tx, message.id(), qty(message))), message);
        } catch (RuntimeException e) {
            check(mode == Mode.GROUP ? "apply, group commit" : "apply", e, List.of(message));
            return null;
        }
    }

    private Outcome<Integer> attemptJoined(Target to, Message message) {
        Handle handle;
        try {
            handle = to.jdbi().open();
        } catch (RuntimeException e) {
            check("joined, the caller's connection", e, List.of(message));
            return null;
        }
        try (handle) {
            PendingOutcome<Integer> pending;
            try {
                handle.begin();
                pending = to.inbox().applyJoined(handle, message.id(), message.content(), message.originTime(),
                        tx -> GaleraDatabase.recordRun(tx, message.id(), qty(message)));
            } catch (RuntimeException e) {
                rollBack(handle, e);
                check("applyJoined", e, List.of(message));
                return null;
            }
            try {
                handle.commit();
            } catch (RuntimeException e) {
                rollBack(handle, e);
                pending.rolledBack();
                check("joined, the caller's commit", e, List.of(message));
                return null;
            }
            return decided(pending.committed(), message);
        }
    }

    private static void rollBack(Handle handle, RuntimeException failure) {
        try {
            handle.rollback();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    private void check(String where, Throwable failure, List<Message> messages) {
        errors.retryable(where, failure, messages.stream().map(Message::id).toList());
    }

    private static Outcome<Integer> decided(Outcome<Integer> outcome, Message message) {
        if (outcome instanceof Outcome.Conflict) {
            throw new AssertionError(message.id() + " was delivered with the same content but found in conflict");
        }
        return outcome;
    }

    /** The qty a message carries: its content is {@code Content.of(qty)}. */
    static long qty(Message message) {
        return java.nio.ByteBuffer.wrap(message.content().bytes()).getLong();
    }
}
