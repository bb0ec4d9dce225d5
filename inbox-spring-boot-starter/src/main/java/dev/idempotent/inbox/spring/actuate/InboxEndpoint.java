package dev.idempotent.inbox.spring.actuate;

import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.RetentionStatus;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.sql.SQLException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code inbox} Actuator endpoint: the inboxes' tables, schema level, counters and retention, and what an inbox
 * recorded for one id: the id, its fingerprint and when it was first received, never the content.
 * The id is looked up in an inbox by its name, {@code /actuator/inbox/{inbox}/{id}}; with a single
 * inbox also {@code /actuator/inbox/{id}}. Like every endpoint but {@code health}, it is not exposed
 * over the web unless the application exposes it
 * ({@code management.endpoints.web.exposure.include=inbox}).
 */
@Endpoint(id = "inbox")
public final class InboxEndpoint {

    private final Map<String, JdbiInbox> byName;

    /**
     * The endpoint of {@code inbox}.
     *
     * @param inbox the inbox; not {@code null}
     */
    public InboxEndpoint(JdbiInbox inbox) {
        this(List.of(Objects.requireNonNull(inbox, "inbox")));
    }

    /**
     * The endpoint of several inboxes, each answered for by its name.
     *
     * @param inboxes the inboxes, at least one, their names distinct
     * @throws IllegalArgumentException if there is none, or two share a name
     */
    public InboxEndpoint(List<? extends JdbiInbox> inboxes) {
        Map<String, JdbiInbox> named = new LinkedHashMap<>();
        for (JdbiInbox inbox : inboxes) {
            if (named.putIfAbsent(inbox.name(), inbox) != null) {
                throw new IllegalArgumentException("two inboxes are named '" + inbox.name()
                        + "'; the inbox endpoint tells inboxes apart by name");
            }
        }
        if (named.isEmpty()) {
            throw new IllegalArgumentException("the inbox endpoint needs an inbox");
        }
        this.byName = Collections.unmodifiableMap(named);
    }

    /**
     * {@return the inbox's name, tables, schema level, counters and retention}: a {@link Summary} with a single inbox, an
     * {@link Inboxes} of one per inbox with several.
     */
    @ReadOperation
    public Answer summary() {
        if (byName.size() == 1) {
            return summary(byName.values().iterator().next());
        }
        Map<String, Summary> each = new LinkedHashMap<>();
        byName.forEach((name, inbox) -> each.put(name, summary(inbox)));
        return new Inboxes(Collections.unmodifiableMap(each));
    }

    private static Summary summary(JdbiInbox inbox) {
        String level;
        try {
            level = InboxSchema.level(inbox).map(Object::toString).orElse("missing");
        } catch (SQLException e) {
            throw new IllegalStateException("the inbox '" + inbox.name() + "' could not read its schema table: "
                    + e.getMessage(), e);
        }
        return new Summary(inbox.name(), inbox.settings().tables().describe(), level, inbox.stats(),
                inbox.retention().status());
    }

    /**
     * What the single inbox recorded for {@code id}.
     *
     * @param id the business id
     * @return the id's record without its content, or {@code null} (404) when the inbox has none
     * @throws InvalidEndpointRequestException (400) with several inboxes, which
     *     {@link #recordIn(String, String)} tells apart
     */
    @ReadOperation
    public Map<String, Object> record(@Selector String id) {
        if (byName.size() != 1) {
            throw new InvalidEndpointRequestException("there are several inboxes " + byName.keySet()
                    + "; ask /actuator/inbox/{inbox}/{id}", "several inboxes, none named");
        }
        return recordIn(byName.keySet().iterator().next(), id);
    }

    /**
     * What the inbox named {@code inbox} recorded for {@code id}.
     *
     * @param inbox the inbox's name
     * @param id the business id
     * @return the id's record without its content, or {@code null} (404) when there is no such
     *     inbox or it has none
     */
    @ReadOperation
    public Map<String, Object> recordIn(@Selector String inbox, @Selector String id) {
        JdbiInbox named = byName.get(inbox);
        return named == null ? null : named.find(id).map(InboxEndpoint::withoutContent).orElse(null);
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

    /** The endpoint's answer for the inboxes as a whole: one {@link Summary}, or {@link Inboxes}. */
    public sealed interface Answer permits Summary, Inboxes {
    }

    /**
     * The endpoint's answer for one inbox.
     *
     * @param name the inbox's name
     * @param tables where its tables are, such as {@code tables inbox_*} or
     *     {@code tables orders_* in schema billing}
     * @param schemaLevel the inbox's schema level recorded in its {@code <prefix>schema} table,
     *     version and revision such as {@code 1.2}, or {@code missing}
     * @param stats its counters since it was built
     * @param retention its horizon, oldest row and purge counters
     */
    public record Summary(String name, String tables, String schemaLevel, InboxStats stats, RetentionStatus retention)
            implements Answer {
    }

    /**
     * The endpoint's answer for several inboxes.
     *
     * @param inboxes each inbox's summary, by its name
     */
    public record Inboxes(Map<String, Summary> inboxes) implements Answer {
    }
}
