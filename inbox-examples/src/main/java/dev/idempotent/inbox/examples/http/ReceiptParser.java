package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a receipt from a request body, strictly: a JSON object with the fields {@code id} (a
 * string), {@code qty} (a JSON integer) and, optionally, {@code origin} (a UTC timestamp string),
 * and no others, in UTF-8 without a byte order mark. Anything looser would let two senders mean
 * different things by the same bytes.
 */
final class ReceiptParser {

    private static final Set<String> FIELDS = Set.of("id", "qty", "origin");

    /**
     * RFC 3339 in UTC only, with an upper-case {@code T} and {@code Z} and at most nine fraction
     * digits. An offset such as {@code +01:00} is refused rather than converted: the origin time is
     * compared with the warehouse's horizon, and one spelling per instant keeps senders honest.
     */
    private static final Pattern ORIGIN = Pattern.compile(
            "\\d{4}-\\d{2}-\\d{2}T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?Z");

    private ReceiptParser() {}

    static Receipt parse(byte[] body) throws Refusal.Thrown {
        JsonNode root = readTree(body);
        if (!root.isObject()) {
            throw refuse("not_an_object", "the body must be a JSON object", null);
        }
        String id = readableId(root.get("id"));
        Iterator<String> names = root.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (!FIELDS.contains(name)) {
                throw refuse("unknown_field", "only the fields id, qty and origin are allowed", id);
            }
        }
        JsonNode idNode = root.get("id");
        if (idNode == null) {
            throw refuse("missing_id", "the field id is required", null);
        }
        if (!idNode.isTextual()) {
            throw refuse("invalid_id", "id must be a JSON string", null);
        }
        Optional<String> problem = ProtocolV1.idProblem(idNode.textValue());
        if (problem.isPresent()) {
            throw refuse("invalid_id", problem.get(), null);
        }
        JsonNode qtyNode = root.get("qty");
        if (qtyNode == null) {
            throw refuse("missing_qty", "the field qty is required", id);
        }
        if (!qtyNode.isIntegralNumber() || !qtyNode.canConvertToInt() || qtyNode.intValue() < 1) {
            throw refuse("invalid_qty", "qty must be a JSON integer from 1 to 2147483647", id);
        }
        return new Receipt(id, qtyNode.intValue(), origin(root.get("origin"), id));
    }

    /** The origin time, empty when the field is absent; a field that is present must be valid. */
    private static Optional<Instant> origin(JsonNode node, String id) throws Refusal.Thrown {
        if (node == null) {
            return Optional.empty();
        }
        String problem = "origin must be a UTC timestamp string such as 2026-01-05T10:00:00.123Z";
        if (!node.isTextual() || !ORIGIN.matcher(node.textValue()).matches()) {
            throw refuse("invalid_origin", problem, id);
        }
        try {
            // The pattern has the shape right; parsing catches dates that do not exist (2026-02-30).
            return Optional.of(Instant.parse(node.textValue()));
        } catch (DateTimeParseException e) {
            throw refuse("invalid_origin", problem, id);
        }
    }

    private static JsonNode readTree(byte[] body) throws Refusal.Thrown {
        String text = utf8(body);
        try {
            JsonNode root = ProtocolV1.JSON.readTree(text);
            if (root == null || root.isMissingNode()) {
                throw refuse("malformed_json", "the body is empty", null);
            }
            return root;
        } catch (JacksonException e) {
            // Jackson's message quotes the body, so it stays out of the answer and the logs.
            throw refuse("malformed_json", "the body is not valid JSON", null);
        } catch (IOException e) {
            throw refuse("malformed_json", "the body could not be read as JSON", null);
        }
    }

    /**
     * The body decoded as UTF-8, strictly. Jackson, given bytes, would guess UTF-16 or UTF-32 from
     * the first ones and skip a byte order mark; protocol v1 is UTF-8 only, so that a body has one
     * reading. A NUL is refused too: JSON text never holds one raw, and UTF-16 or UTF-32 without a
     * byte order mark decodes to NULs between the characters.
     */
    private static String utf8(byte[] body) throws Refusal.Thrown {
        if (body.length >= 3 && body[0] == (byte) 0xEF && body[1] == (byte) 0xBB && body[2] == (byte) 0xBF) {
            throw refuse("invalid_encoding", "the body must be UTF-8 without a byte order mark", null);
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body))
                    .toString();
        } catch (CharacterCodingException e) {
            throw refuse("invalid_encoding", "the body is not valid UTF-8", null);
        }
        if (text.indexOf('\0') >= 0) {
            throw refuse("invalid_encoding", "the body holds a NUL character; it must be JSON in UTF-8", null);
        }
        return text;
    }

    /** The id if the node is a valid id string, so refusals can echo it; otherwise {@code null}. */
    private static String readableId(JsonNode node) {
        if (node != null && node.isTextual() && ProtocolV1.idProblem(node.textValue()).isEmpty()) {
            return node.textValue();
        }
        return null;
    }

    private static Refusal.Thrown refuse(String error, String message, String id) {
        return new Refusal.Thrown(new Refusal(400, error, message, id));
    }
}
