package dev.idempotent.inbox.spring.actuate;

import dev.idempotent.inbox.RetentionStatus;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The inbox's health: up when its store answers and holds the inbox's schema, with its tables
 * ({@code tables inbox_*}, and the schema they are in if not the connection's), the schema version
 * and level ({@code 1.2}: version and revision) recorded in the inbox's {@code <prefix>schema}
 * table, the retention horizon and its age, the oldest row's age, and the counters as details.
 * Down, with the store's error, when the database cannot be read, and with {@code schemaVersion}
 * {@code missing} when that table or its row is.
 */
public final class InboxHealthIndicator extends AbstractHealthIndicator {

    private final JdbiInbox inbox;
    private final Clock clock;

    /**
     * The health of {@code inbox}.
     *
     * @param inbox the inbox; not {@code null}
     * @param clock the clock the horizon's age is measured by; not {@code null}
     */
    public InboxHealthIndicator(JdbiInbox inbox, Clock clock) {
        super("inbox health check failed");
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws SQLException {
        builder.withDetail("name", inbox.name());
        builder.withDetail("tables", inbox.settings().tables().describe());
        Optional<SchemaMigrations.Level> level = InboxSchema.level(inbox);
        if (level.isEmpty()) {
            builder.down().withDetail("schemaVersion", "missing");
            return;
        }
        RetentionStatus retention = inbox.retention().status();
        builder.up().withDetail("schemaVersion", level.get().version());
        builder.withDetail("schemaLevel", level.get().toString());
        retention.horizon().ifPresent(horizon -> {
            builder.withDetail("horizon", horizon.toString());
            builder.withDetail("horizonAge", Duration.between(horizon, clock.instant()).toString());
        });
        retention.oldestRowAge().ifPresent(age -> builder.withDetail("oldestRowAge", age.toString()));
        builder.withDetail("stats", inbox.stats());
    }
}
