package dev.idempotent.inbox.micrometer;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PurgeReport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The meters of inboxes, fed by their listener: give it to the builder of every inbox to measure,
 * {@code SqliteInbox.builder(file).name("receipts").listener(metrics).build()}. One instance serves
 * any number of inboxes; their meters are told apart by the tag {@code inbox}, the inbox's name.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@code inbox.messages}</td><td>counter</td><td>{@code inbox}, {@code outcome}</td>
 *       <td>calls, one per message, counted once the commit (or rollback) that decides them
 *       returned; {@code outcome} is {@code applied}, {@code duplicate}, {@code conflict},
 *       {@code stale}, {@code busy}, {@code unknown} (the commit's result never came back),
 *       {@code invalid} or {@code failed}</td></tr>
 *   <tr><td>{@code inbox.apply.queue}</td><td>timer</td><td>{@code inbox}</td>
 *       <td>from the call to the moment its work began in a transaction: the wait for the writer,
 *       or under group commit for the group and the members ahead of it</td></tr>
 *   <tr><td>{@code inbox.apply.transaction}</td><td>timer</td><td>{@code inbox}</td>
 *       <td>from then to the end of the commit or rollback</td></tr>
 *   <tr><td>{@code inbox.group.size}</td><td>distribution summary</td><td>{@code inbox}</td>
 *       <td>messages per committed transaction, under {@link CommitMode#GROUP} only</td></tr>
 *   <tr><td>{@code inbox.purges}</td><td>counter</td><td>{@code inbox}</td>
 *       <td>purges finished</td></tr>
 *   <tr><td>{@code inbox.purge.rows}</td><td>counter</td><td>{@code inbox}</td>
 *       <td>rows those purges deleted</td></tr>
 *   <tr><td>{@code inbox.retention.horizon.age}</td><td>time gauge</td><td>{@code inbox}</td>
 *       <td>how long ago the horizon is, the receive time before which rows may be gone: as read
 *       by {@link #bind} and moved by each purge through this instance; absent (NaN) while
 *       unknown</td></tr>
 * </table>
 *
 * <p>The two timers cover {@code apply}; {@code applyAll} is counted but not timed. The whole
 * duration of each call, by outcome, is the timer {@code inbox.apply} of the observations that
 * {@link InboxObservations} makes, which an {@code ObservationRegistry} with a meter handler
 * records (Spring Boot registers one). No tag ever holds a message id.
 *
 * <p>Thread-safe. The listener calls are quick: a map lookup and an increment.
 */
@Beta
public final class InboxMetrics implements InboxListener {

    private final MeterRegistry registry;
    private final Clock clock;
    private final Map<String, InboxMeters> byInbox = new ConcurrentHashMap<>();

    private InboxMetrics(MeterRegistry registry, Clock clock) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Meters in {@code registry}, with the horizon's age measured on the UTC system clock.
     *
     * @param registry where the meters are registered; not {@code null}
     * @return the listener to give to each inbox's builder
     */
    public static InboxMetrics of(MeterRegistry registry) {
        return new InboxMetrics(registry, Clock.systemUTC());
    }

    /**
     * Meters in {@code registry}, with the horizon's age measured on {@code clock}; give it the
     * inboxes' own clock if they were built with one.
     *
     * @param registry where the meters are registered; not {@code null}
     * @param clock the clock the horizon's age is measured on; not {@code null}
     * @return the listener to give to each inbox's builder
     */
    public static InboxMetrics of(MeterRegistry registry, Clock clock) {
        return new InboxMetrics(registry, clock);
    }

    /**
     * Registers the meters of an open inbox built with this listener, and reads its horizon once,
     * so that the horizon's age is known before this process's first purge. Optional: without it
     * an inbox's meters appear with its first call, and the age with its first purge.
     *
     * @param inbox the inbox; not {@code null}
     * @return this
     * @throws dev.idempotent.inbox.InboxStorageException if the horizon cannot be read
     */
    public InboxMetrics bind(Inbox<?> inbox) {
        Objects.requireNonNull(inbox, "inbox");
        InboxMeters meters = meters(inbox.name());
        inbox.retention().status().horizon().ifPresent(meters::horizonAtLeast);
        return this;
    }

    @Override
    public void onOutcome(String inbox, Outcome<?> outcome, Duration took) {
        meters(inbox).count(Outcomes.of(outcome));
    }

    @Override
    public void onFailure(String inbox, String id, Throwable failure, Duration took) {
        meters(inbox).count(Outcomes.of(failure));
    }

    @Override
    public void onTimed(String inbox, String id, Duration queued, Duration inTransaction) {
        InboxMeters meters = meters(inbox);
        meters.queue.record(queued);
        meters.transaction.record(inTransaction);
    }

    @Override
    public void onGroupCommitted(String inbox, int size) {
        meters(inbox).groupSize.record(size);
    }

    @Override
    public void onPurged(String inbox, PurgeReport report) {
        InboxMeters meters = meters(inbox);
        meters.purges.increment();
        meters.purgedRows.increment(report.rowsPurged());
        meters.horizonAtLeast(report.horizon());
    }

    private InboxMeters meters(String inbox) {
        InboxMeters meters = byInbox.get(inbox);
        return meters != null ? meters : byInbox.computeIfAbsent(inbox, name -> new InboxMeters(name, registry, clock));
    }

    /** One inbox's meters, registered once; every outcome's counter exists from the start, at zero. */
    private static final class InboxMeters {
        private final Counter[] messages = new Counter[Outcomes.ALL.size()];
        private final Timer queue;
        private final Timer transaction;
        private final DistributionSummary groupSize;
        private final Counter purges;
        private final Counter purgedRows;
        private final AtomicReference<Instant> horizon = new AtomicReference<>();

        InboxMeters(String inbox, MeterRegistry registry, Clock clock) {
            for (String outcome : Outcomes.ALL) {
                messages[Outcomes.index(outcome)] = Counter.builder("inbox.messages")
                        .description("Messages the inbox decided, by outcome, counted after the commit that decided them")
                        .baseUnit("messages")
                        .tag("inbox", inbox)
                        .tag("outcome", outcome)
                        .register(registry);
            }
            queue = Timer.builder("inbox.apply.queue")
                    .description("Time from the call to apply until its work began in a transaction")
                    .tag("inbox", inbox)
                    .register(registry);
            transaction = Timer.builder("inbox.apply.transaction")
                    .description("Time of apply inside its transaction, up to the end of the commit or rollback")
                    .tag("inbox", inbox)
                    .register(registry);
            groupSize = DistributionSummary.builder("inbox.group.size")
                    .description("Messages committed together in one transaction under group commit")
                    .baseUnit("messages")
                    .tag("inbox", inbox)
                    .register(registry);
            purges = Counter.builder("inbox.purges")
                    .description("Purges of rows older than the retention that finished")
                    .tag("inbox", inbox)
                    .register(registry);
            purgedRows = Counter.builder("inbox.purge.rows")
                    .description("Rows deleted by purges")
                    .baseUnit("rows")
                    .tag("inbox", inbox)
                    .register(registry);
            TimeGauge.builder("inbox.retention.horizon.age", horizon, TimeUnit.MILLISECONDS, known -> {
                        Instant at = known.get();
                        return at == null ? Double.NaN : clock.millis() - at.toEpochMilli();
                    })
                    .description("How long ago the horizon is: rows received before it may have been purged")
                    .tag("inbox", inbox)
                    .register(registry);
        }

        void count(String outcome) {
            messages[Outcomes.index(outcome)].increment();
        }

        /** Keeps the latest horizon seen; the stored one only ever moves forward, and so does this. */
        void horizonAtLeast(Instant seen) {
            horizon.accumulateAndGet(seen, (known, next) -> known == null || next.isAfter(known) ? next : known);
        }
    }
}
