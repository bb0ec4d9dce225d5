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
 */
public record InboxRecord(
        String inbox, String id, Fingerprint fingerprint, Instant firstReceivedAt, Optional<Content> content) {

    /**
     * Checks that no component is {@code null}.
     *
     * @param inbox the inbox's name
     * @param id the business id
     * @param fingerprint the fingerprint of the content first received
     * @param firstReceivedAt when the id was first applied
     * @param content the content itself, present only when the inbox was built with
     *     {@link ContentStorage#FULL_CONTENT}
     * @throws NullPointerException if a component is {@code null}
     */
    public InboxRecord {
        Objects.requireNonNull(inbox, "inbox");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(firstReceivedAt, "firstReceivedAt");
        Objects.requireNonNull(content, "content");
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
     * @return the record
     */
    public static InboxRecord stored(
            String inbox, String id, Fingerprint fingerprint, Instant firstReceivedAt, byte[] content) {
        return new InboxRecord(inbox, id, fingerprint, firstReceivedAt,
                Optional.ofNullable(content).map(bytes -> Content.restore(fingerprint.contentType(), bytes)));
    }
}
