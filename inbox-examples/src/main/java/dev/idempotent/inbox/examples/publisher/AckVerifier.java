package dev.idempotent.inbox.examples.publisher;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * Classifies one attempt's response. A status of 200 alone proves nothing: a success for some
 * other order is no evidence for this one, so the body must name this id and say
 * {@code "accepted": true} as a JSON boolean, in protocol version 1. A refusal is no more
 * trusted: only the receiver's own protocol v1 answer for this id makes it definite, since a
 * proxy's HTML {@code 400} says nothing about the receiver.
 */
public final class AckVerifier {

    /**
     * Statuses the receiver gives only when it will refuse the same request again; 422 is a
     * shipment too old for the receiver to judge (stale), which no resend can make younger.
     */
    private static final Set<Integer> DEFINITE = Set.of(400, 409, 413, 415, 422);
    private static final int UNAUTHORIZED = 401;
    private static final int MAX_REASON_LENGTH = 200;

    private AckVerifier() {}

    /**
     * The verdict on a response with {@code status} and {@code body} to a request for {@code id},
     * with a {@code 401} resent ({@link PublisherSettings.AuthFailure#RESEND}).
     */
    public static Verdict classify(String id, int status, byte[] body, Optional<String> retryAfter) {
        return classify(id, status, body, retryAfter, PublisherSettings.AuthFailure.RESEND);
    }

    /**
     * The verdict on a response with {@code status} and {@code body} to a request for {@code id}.
     * A refusal is {@link Verdict.Rejected} only when its status is one the receiver repeats for
     * the same request and its body is a protocol v1 refusal of this id; a {@code 401} only when
     * {@code onAuthFailure} says {@link PublisherSettings.AuthFailure#PARK}. Anything else is
     * {@link Verdict.Uncertain}.
     */
    public static Verdict classify(
            String id, int status, byte[] body, Optional<String> retryAfter, PublisherSettings.AuthFailure onAuthFailure) {
        if (status == 200) {
            return verify(id, body);
        }
        if (status == UNAUTHORIZED && onAuthFailure == PublisherSettings.AuthFailure.PARK) {
            // No id to check: the receiver refuses a token before it reads the body.
            return new Verdict.Rejected(status, "HTTP 401" + errorOf(body)
                    + "; token refused, parked as --park-on-auth-failure asks");
        }
        if (DEFINITE.contains(status)) {
            Optional<String> notOurs = notARefusalOf(id, body);
            if (notOurs.isEmpty()) {
                return new Verdict.Rejected(status, "HTTP " + status + errorOf(body));
            }
            return new Verdict.Uncertain("HTTP " + status + " " + notOurs.get() + errorOf(body),
                    retryAfter.flatMap(AckVerifier::seconds));
        }
        return new Verdict.Uncertain("HTTP " + status + errorOf(body), retryAfter.flatMap(AckVerifier::seconds));
    }
    /** The verdict when no response came back. */
    static Verdict classify(IOException failure) {
        if (failure instanceof HttpTimeoutException) {
            return Verdict.Uncertain.of("no response in time");
        }
        if (failure instanceof ConnectException) {
            return Verdict.Uncertain.of("could not connect");
        }
        return Verdict.Uncertain.of("connection closed before a response");
    }

    private static Verdict verify(String id, byte[] body) {
        JsonNode root = json(body);
        if (root == null || !root.isObject()) {
            return Verdict.Uncertain.of("200 without a JSON object body");
        }
        JsonNode protocol = root.get("protocol");
        if (protocol == null || !protocol.isInt() || protocol.intValue() != ProtocolV1.VERSION) {
            return Verdict.Uncertain.of("200 without \"protocol\": 1");
        }
        JsonNode ackedId = root.get("id");
        if (ackedId == null || !ackedId.isTextual() || !ackedId.textValue().equals(id)) {
            return Verdict.Uncertain.of("200 for another id");
        }
        JsonNode accepted = root.get("accepted");
        if (accepted == null || !accepted.isBoolean() || !accepted.booleanValue()) {
            return Verdict.Uncertain.of("200 without \"accepted\": true");
        }
        JsonNode applied = root.get("applied");
        return new Verdict.Acked(applied == null || !applied.isBoolean() || applied.booleanValue());
    }

    /**
     * Empty when {@code body} is the receiver's protocol v1 refusal of {@code id}: a JSON object
     * with {@code "protocol": 1}, this {@code id}, {@code "accepted": false} and an {@code error}
     * code; otherwise what it lacks.
     */
    private static Optional<String> notARefusalOf(String id, byte[] body) {
        JsonNode root = json(body);
        if (root == null || !root.isObject()) {
            return Optional.of("without a JSON object body");
        }
        JsonNode protocol = root.get("protocol");
        if (protocol == null || !protocol.isInt() || protocol.intValue() != ProtocolV1.VERSION) {
            return Optional.of("without \"protocol\": 1");
        }
        JsonNode refusedId = root.get("id");
        if (refusedId == null || !refusedId.isTextual() || !refusedId.textValue().equals(id)) {
            return Optional.of("not for this id");
        }
        JsonNode accepted = root.get("accepted");
        JsonNode error = root.get("error");
        if (accepted == null || !accepted.isBoolean() || accepted.booleanValue() || error == null || !error.isTextual()) {
            return Optional.of("without \"accepted\": false and an error code");
        }
        return Optional.empty();
    }

    /** The receiver's error code and message, for the operator; empty when it gave none. */
    private static String errorOf(byte[] body) {
        JsonNode root = json(body);
        if (root == null || !root.isObject()) {
            return "";
        }
        StringBuilder text = new StringBuilder();
        JsonNode error = root.get("error");
        if (error != null && error.isTextual()) {
            text.append(' ').append(error.textValue());
        }
        JsonNode message = root.get("message");
        if (message != null && message.isTextual()) {
            text.append(": ").append(message.textValue());
        }
        return printable(text.toString());
    }

    /**
     * The body as JSON, or {@code null}. Decoded here, strictly as UTF-8 without a byte order
     * mark: Jackson, given the bytes, would skip a byte order mark and read UTF-16 or UTF-32, and
     * protocol v1 bodies are UTF-8 only, in both directions, so that a body has one reading.
     */
    private static JsonNode json(byte[] body) {
        if (body.length == 0) {
            return null;
        }
        try {
            String text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body))
                    .toString();
            if (text.startsWith("\uFEFF")) {
                return null;
            }
            return ProtocolV1.JSON.readTree(text);
        } catch (IOException e) {
            // CharacterCodingException included: not UTF-8
            return null;
        }
    }

    private static Optional<Duration> seconds(String header) {
        try {
            long seconds = Long.parseLong(header.trim());
            return seconds >= 0 ? Optional.of(Duration.ofSeconds(seconds)) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** The body as text for people: {@link #printable} of its UTF-8 reading. */
    static String text(byte[] body) {
        return printable(new String(body, StandardCharsets.UTF_8));
    }

    /** Strips control characters and bounds the length: the text is the receiver's, not ours. */
    private static String printable(String text) {
        StringBuilder clean = new StringBuilder();
        text.codePoints().filter(c -> !Character.isISOControl(c)).forEach(clean::appendCodePoint);
        String result = clean.toString();
        return result.length() > MAX_REASON_LENGTH ? result.substring(0, MAX_REASON_LENGTH) + "..." : result;
    }
}
