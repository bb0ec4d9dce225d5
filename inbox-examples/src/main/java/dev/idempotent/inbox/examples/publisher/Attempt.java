package dev.idempotent.inbox.examples.publisher;

import java.net.URI;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * One delivery attempt, after its result was recorded in the outbox.
 *
 * @param id the business id
 * @param qty the quantity sent
 * @param number which attempt this was for the item, from 1
 * @param status the HTTP status, empty when no response came back
 * @param response the response body as text, control characters removed and cut at 200
 *     characters; empty when there was none
 * @param verdict what the attempt proved
 * @param state where the item stands now
 * @param receiver the receiver the attempt went to
 */
public record Attempt(
        String id, int qty, int number, OptionalInt status, String response, Verdict verdict, ItemState state,
        URI receiver) {
    public Attempt {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(receiver, "receiver");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(response, "response");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(state, "state");
    }
}
