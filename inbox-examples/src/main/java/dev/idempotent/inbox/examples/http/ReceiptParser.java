package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.Iterator;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a receipt from a request body, strictly: a JSON object with exactly the fields {@code id}
 * (a string) and {@code qty} (a JSON integer). Anything looser would let two senders mean
 * different things by the same bytes.
 */
final class ReceiptParser {

    private static final Set<String> FIELDS = Set.of("id", "qty");

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
                throw refuse("unknown_field", "only the fields id and qty are allowed", id);
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
        return new Receipt(id, qtyNode.intValue());
    }

    private static JsonNode readTree(byte[] body) throws Refusal.Thrown {
        try {
            JsonNode root = ProtocolV1.JSON.readTree(body);
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
