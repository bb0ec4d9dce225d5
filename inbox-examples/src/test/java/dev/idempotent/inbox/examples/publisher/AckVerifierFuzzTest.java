package dev.idempotent.inbox.examples.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.idempotent.inbox.examples.ReferenceJson;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The ACK verifier against docs/PROTOCOL.md's "How the publisher classifies an attempt", read
 * independently by {@link #protocolVerdict}: ACKED only for a conforming 200, REJECTED only for
 * the receiver's protocol v1 refusal of this id (or a 401 when asked to park it), UNCERTAIN for
 * everything else; never an exception, and never a control character in a reason shown to people.
 *
 * <p>The input is laid out so that committed inputs can be read and written by hand: byte 0
 * picks the status, byte 1 the switches (bit 0: park on 401, bit 1: a {@code Retry-After}
 * header follows), then the request's id up to a line feed, then the header up to a line feed
 * when there is one, then the response body.
 */
class AckVerifierFuzzTest {

    private static final int[] STATUSES = {200, 400, 401, 409, 413, 415, 422, 500, 503, 404, 201, 204, 302, 429};
    private static final Set<Integer> DEFINITE = Set.of(400, 409, 413, 415, 422);

    /** What the protocol says of an attempt, by the verdict's kind. */
    enum Kind { ACKED_APPLIED, ACKED_DUPLICATE, REJECTED, UNCERTAIN }

    @FuzzTest
    @DictionaryEntries({"\"protocol\"", "\"id\"", "\"accepted\"", "\"applied\"", "\"error\"", "\"message\"", "true",
            "false", "snack-7", "\uFEFF"})
    void verdictIsWhatTheProtocolSays(byte[] input) {
        if (input.length < 2) {
            return;
        }
        int status = STATUSES[Math.floorMod(input[0], STATUSES.length)];
        boolean park = (input[1] & 1) != 0;
        int at = 2;
        int idEnd = lineEnd(input, at);
        String id = new String(input, at, idEnd - at, StandardCharsets.UTF_8);
        at = Math.min(input.length, idEnd + 1);
        Optional<String> retryAfter = Optional.empty();
        if ((input[1] & 2) != 0) {
            int headerEnd = lineEnd(input, at);
            retryAfter = Optional.of(new String(input, at, headerEnd - at, StandardCharsets.UTF_8));
            at = Math.min(input.length, headerEnd + 1);
        }
        byte[] body = Arrays.copyOfRange(input, at, input.length);

        Verdict verdict = AckVerifier.classify(id, status, body, retryAfter,
                park ? PublisherSettings.AuthFailure.PARK : PublisherSettings.AuthFailure.RESEND);

        assertEquals(protocolVerdict(id, status, body, park), kind(verdict), verdict.describe());
        String reason = verdict.describe();
        assertFalse(reason.codePoints().anyMatch(Character::isISOControl), "a reason for people holds a control character");
        if (verdict instanceof Verdict.Rejected rejected) {
            assertEquals(status, rejected.status());
        }
        if (verdict instanceof Verdict.Uncertain uncertain) {
            uncertain.retryAfter().ifPresent(wait -> assertFalse(wait.isNegative(), "a negative Retry-After"));
        }
    }

    private static int lineEnd(byte[] input, int from) {
        int end = from;
        while (end < input.length && input[end] != '\n') {
            end++;
        }
        return end;
    }

    private static Kind kind(Verdict verdict) {
        if (verdict instanceof Verdict.Acked acked) {
            return acked.applied() ? Kind.ACKED_APPLIED : Kind.ACKED_DUPLICATE;
        }
        if (verdict instanceof Verdict.Rejected) {
            return Kind.REJECTED;
        }
        assertInstanceOf(Verdict.Uncertain.class, verdict);
        return Kind.UNCERTAIN;
    }

    /** The table of docs/PROTOCOL.md, with the body read as strict UTF-8 JSON. */
    static Kind protocolVerdict(String id, int status, byte[] body, boolean park) {
        Map<?, ?> object = ReferenceJson.read(body).filter(v -> v instanceof Map<?, ?>).map(v -> (Map<?, ?>) v).orElse(null);
        boolean forThisId = object != null
                && object.get("protocol") instanceof ReferenceJson.Number protocol && protocol.text().equals("1")
                && id.equals(object.get("id"));
        if (status == 200) {
            if (forThisId && Boolean.TRUE.equals(object.get("accepted"))) {
                // "applied:false is counted as duplicate confirmed"
                return Boolean.FALSE.equals(object.get("applied")) ? Kind.ACKED_DUPLICATE : Kind.ACKED_APPLIED;
            }
            return Kind.UNCERTAIN;
        }
        if (DEFINITE.contains(status) && forThisId && Boolean.FALSE.equals(object.get("accepted"))
                && object.get("error") instanceof String) {
            return Kind.REJECTED;
        }
        if (status == 401 && park) {
            return Kind.REJECTED;
        }
        return Kind.UNCERTAIN;
    }
}
