package dev.idempotent.inbox;

import java.util.Objects;
import java.util.Optional;

/**
 * What {@link Inbox#applyAll} did with one message of a batch: an outcome, or the exception that
 * rolled back this message alone (the effect's own, unchanged, or an {@link InboxException}).
 *
 * @param message the message
 * @param outcome the outcome, when the message was judged and committed
 * @param failure why it was not, otherwise
 */
public record MessageResult<R>(Message message, Optional<Outcome<R>> outcome, Optional<Exception> failure) {

    /**
     * Checks that exactly one of {@code outcome} and {@code failure} is present.
     *
     * @param message the message
     * @param outcome the outcome, when the message was judged and committed
     * @param failure why it was not, otherwise
     * @throws IllegalArgumentException if both or neither are present
     * @throws NullPointerException if a component is {@code null}
     */
    public MessageResult {
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(failure, "failure");
        if (outcome.isPresent() == failure.isPresent()) {
            throw new IllegalArgumentException("a message result has either an outcome or a failure");
        }
    }

    /**
     * A message that was judged and committed.
     *
     * @param <R> what the effect returns
     * @param message the message
     * @param outcome its outcome
     * @return the result
     */
    public static <R> MessageResult<R> of(Message message, Outcome<R> outcome) {
        return new MessageResult<>(message, Optional.of(outcome), Optional.empty());
    }

    /**
     * A message rolled back alone by {@code failure}.
     *
     * @param <R> what the effect returns
     * @param message the message
     * @param failure the effect's exception or an {@link InboxException}
     * @return the result
     */
    public static <R> MessageResult<R> failed(Message message, Exception failure) {
        return new MessageResult<>(message, Optional.empty(), Optional.of(failure));
    }

    /** {@return true when the outcome is Applied or Duplicate}: acknowledge this message. */
    public boolean isAccepted() {
        return outcome.map(Outcome::isAccepted).orElse(false);
    }
}
