package dev.idempotent.inbox;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What an inbox recorded for one id.
 *
 * @param inbox the inbox's name
 * @param id the business id
 * @param fingerprint the fingerprint of the content first received
 * @param firstReceivedAt when the id was first applied
 * @param content the content itself, present only when the inbox was built with
 *     {@link ContentStorage#FULL_CONTENT}
 * @param result the effect's result as stored, present only when the record was applied through
 *     an inbox that stores results; empty for a record without one
 */
public record InboxRecord(String inbox, String id, Fingerprint fingerprint, Instant firstReceivedAt,
        Optional<Content> content, Optional<EncodedResult> result) {

    /**
     * Checks that no component is {@code null}.
     *
     * @param inbox the inbox's name
     * @param id the business id
     * @param fingerprint the fingerprint of the content first received
     * @param firstReceivedAt when the id was first applied
     * @param content the content itself, present only when the inbox was built with
     *     {@link ContentStorage#FULL_CONTENT}
     * @param result the effect's result as stored, or empty
     * @throws NullPointerException if a component is {@code null}
     */
    public InboxRecord {
        Objects.requireNonNull(inbox, "inbox");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(firstReceivedAt, "firstReceivedAt");
        Objects.requireNonNull(content, "content");
        Objects.requireNonNull(result, "result");
    }

    /**
     * A record without a stored result, as every record was before results were stored.
     *
     * @param inbox the inbox's name
     * @param id the business id
     * @param fingerprint the fingerprint of the content first received
     * @param firstReceivedAt when the id was first applied
     * @param content the content itself, or empty
     * @throws NullPointerException if a component is {@code null}
     */
    public InboxRecord(String inbox, String id, Fingerprint fingerprint, Instant firstReceivedAt,
            Optional<Content> content) {
        this(inbox, id, fingerprint, firstReceivedAt, content, Optional.empty());
    }

    /**
     * A record as a store reads it back.
     *
     * @param inbox the inbox's name
     * @param id the business id
     * @param fingerprint the stored fingerprint
     * @param firstReceivedAt the stored receive time
     * @param content the stored content bytes, of the fingerprint's content type, or {@code null}
     *     when only the fingerprint was kept
     * @param result the stored result, or {@code null} when none was stored
     * @return the record
     */
    public static InboxRecord stored(String inbox, String id, Fingerprint fingerprint, Instant firstReceivedAt,
            byte[] content, EncodedResult result) {
        return new InboxRecord(inbox, id, fingerprint, firstReceivedAt,
                Optional.ofNullable(content).map(bytes -> Content.restore(fingerprint.contentType(), bytes)),
                Optional.ofNullable(result));
    }
}
