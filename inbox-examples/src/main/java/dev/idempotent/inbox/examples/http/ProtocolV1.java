package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.MessageIds;
import java.util.Optional;

/** The constants of the receipt protocol, version 1, shared by the receiver and the publisher. */
public final class ProtocolV1 {

    /** The protocol version every response names in its {@code protocol} field. */
    public static final int VERSION = 1;
    /** The path shipments are posted to. */
    public static final String RECEIPTS = "/receipts";
    /** The path of the stock snapshot. */
    public static final String STOCK = "/stock";
    /** The path of the Prometheus metrics. */
    public static final String METRICS = "/metrics";
    /** The only request media type accepted. */
    public static final String JSON_MEDIA_TYPE = "application/json";
    /** The largest request body accepted: 64 KiB. */
    public static final int MAX_BODY_BYTES = 64 * 1024;

    /**
     * The JSON mapper both sides use. Duplicate keys and trailing content are refused, so that a
     * body has exactly one reading.
     */
    public static final ObjectMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private ProtocolV1() {}

    /**
     * Why {@code id} is not a valid id, or empty when it is: the inbox's own rule
     * ({@link MessageIds#check}), so the receiver refuses with 400 exactly what the inbox would
     * refuse. The reason never quotes the id.
     *
     * @param id the id as received; not {@code null}
     * @return the reason, or empty
     */
    public static Optional<String> idProblem(String id) {
        return idProblemOf(id);
    }

    /**
     * Reads a receipt from a body as {@code POST /receipts} takes it, with the same rules, for
     * receivers that take receipts from elsewhere (a broker's message).
     *
     * @param body the JSON body, UTF-8
     * @return the receipt
     * @throws IllegalArgumentException naming the refusal's code and reason, never quoting the body
     */
    public static Receipt parseReceipt(byte[] body) {
        try {
            return ReceiptParser.parse(body);
        } catch (Refusal.Thrown thrown) {
            throw new IllegalArgumentException(thrown.refusal().error() + ": " + thrown.refusal().message());
        }
    }

    private static Optional<String> idProblemOf(String id) {
        try {
            MessageIds.check(id);
            return Optional.empty();
        } catch (InvalidMessageException e) {
            return Optional.of(e.getMessage());
        }
    }
}
