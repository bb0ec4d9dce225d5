package dev.idempotent.inbox.spring.actuate;

import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.RetentionStatus;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code inbox} Actuator endpoint: the inbox's counters and retention, and what it recorded for
 * one id ({@code /actuator/inbox/{id}}): the id, its fingerprint and when it was first received,
 * never the content. Like every endpoint but {@code health}, it is not exposed over the web unless
 * the application exposes it ({@code management.endpoints.web.exposure.include=inbox}).
 */
@Endpoint(id = "inbox")
public final class InboxEndpoint {

    private final JdbiInbox inbox;

    /**
     * The endpoint of {@code inbox}.
     *
     * @param inbox the inbox; not {@code null}
     */
    public InboxEndpoint(JdbiInbox inbox) {
        this.inbox = Objects.requireNonNull(inbox, "inbox");
    }

    /**
     * {@return the inbox's name, counters and retention}
     */
    @ReadOperation
    public Summary summary() {
        return new Summary(inbox.name(), inbox.stats(), inbox.retention().status());
    }

    /**
     * What the inbox recorded for {@code id}.
     *
     * @param id the business id
     * @return the id's record without its content, or {@code null} (404) when the inbox has none
     */
    @ReadOperation
    public Map<String, Object> record(@Selector String id) {
        return inbox.find(id).map(InboxEndpoint::withoutContent).orElse(null);
    }

    private static Map<String, Object> withoutContent(InboxRecord record) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("inbox", record.inbox());
        fields.put("id", record.id());
        fields.put("contentType", record.fingerprint().contentType().toString());
        fields.put("fingerprintAlgorithm", record.fingerprint().algorithm());
        fields.put("fingerprint", record.fingerprint().hex());
        fields.put("firstReceivedAt", record.firstReceivedAt().toString());
        return fields;
    }

    /**
     * The endpoint's answer for the inbox as a whole.
     *
     * @param name the inbox's name
     * @param stats its counters since it was built
     * @param retention its horizon, oldest row and purge counters
     */
    public record Summary(String name, InboxStats stats, RetentionStatus retention) {
    }
}
