package dev.idempotent.inbox.examples.http;

/**
 * A request the receiver answered without changing anything, as it goes out on the wire.
 *
 * @param status the HTTP status
 * @param error a stable code for programs, such as {@code invalid_qty}
 * @param message a sentence for people; never quotes the payload
 * @param id the request's id when it could be read and is a valid id, else {@code null}
 */
record Refusal(int status, String error, String message, String id) {

    static Refusal of(int status, String error, String message) {
        return new Refusal(status, error, message, null);
    }

    Refusal withId(String id) {
        return new Refusal(status, error, message, id);
    }

    /** Carries a refusal out of the parsing code to the handler that answers it. */
    static final class Thrown extends Exception {
        private final Refusal refusal;

        Thrown(Refusal refusal) {
            super(refusal.error(), null, false, false);
            this.refusal = refusal;
        }

        Refusal refusal() {
            return refusal;
        }
    }
}
