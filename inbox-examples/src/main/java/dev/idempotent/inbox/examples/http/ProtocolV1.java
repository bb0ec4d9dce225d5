package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
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
    /** The longest id, in Unicode code points. */
    public static final int MAX_ID_LENGTH = 255;

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
     * Why {@code id} is not a valid id, or empty when it is: 1 to {@value #MAX_ID_LENGTH}
     * characters, not blank, no control characters, no unpaired surrogates. The reason never
     * quotes the id.
     */
    public static Optional<String> idProblem(String id) {
        if (id.isBlank()) {
            return Optional.of(id.isEmpty() ? "id must not be empty" : "id must not be blank");
        }
        int length = 0;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < id.length() && Character.isLowSurrogate(id.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return Optional.of("id holds an unpaired surrogate");
            } else if (Character.isISOControl(c)) {
                return Optional.of("id must not hold control characters");
            }
            length++;
        }
        if (length > MAX_ID_LENGTH) {
            return Optional.of("id must be at most " + MAX_ID_LENGTH + " characters");
        }
        return Optional.empty();
    }
}
