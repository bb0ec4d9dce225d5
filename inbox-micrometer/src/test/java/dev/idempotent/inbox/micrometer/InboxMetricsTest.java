package dev.idempotent.inbox.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.StaleMessageException;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import dev.idempotent.inbox.testkit.MutableClock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The meters of {@link InboxMetrics} over a real SQLite inbox, against the outcomes it returned. */
class InboxMetricsTest {

    private static final String INBOX = "receipts";

    @TempDir
    Path dir;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MutableClock clock = new MutableClock(Instant.parse("2026-03-01T00:00:00Z"));
    private final InboxMetrics metrics = InboxMetrics.of(registry, clock);

    private SqliteInbox open(Duration busyTimeout) {
        return SqliteInbox.builder(dir.resolve("metrics.db"))
                .name(INBOX)
                .clock(clock)
                .retention(Duration.ofDays(1))
                .busyTimeout(busyTimeout)
                .listener(metrics)
                .build();
    }

    /** The count so far; zero before the inbox's meters exist, which they do from its first call on. */
    private double messages(String outcome) {
        Counter counter = registry.find("inbox.messages").tag("inbox", INBOX).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private Map<String, Double> allMessages() {
        Map<String, Double> counts = new TreeMap<>();
        registry.find("inbox.messages").counters()
                .forEach(counter -> counts.put(counter.getId().getTag("outcome"), counter.count()));
        return counts;
    }

    @Test
    void countsEveryOutcomeExactlyOnceAfterTheCommitThatDecidedIt() throws Exception {
        List<Double> appliedSeenInsideEffect = new ArrayList<>();
        try (SqliteInbox inbox = open(Duration.ZERO)) {
            for (String id : List.of("snack-1", "snack-2", "snack-3")) {
                inbox.apply(id, Content.of(1), tx -> {
                    appliedSeenInsideEffect.add(messages("applied"));
                    return null;
                });
            }
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-1", Content.of(1), tx -> 0));
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-1", Content.of(1), tx -> 0));
            assertInstanceOf(Outcome.Conflict.class, inbox.apply("snack-2", Content.of(99), tx -> 0));
            assertThrows(IllegalStateException.class, () -> inbox.apply("snack-4", Content.of(1), tx -> {
                throw new IllegalStateException("the effect fails");
            }));
            assertThrows(InvalidMessageException.class, () -> inbox.apply("", Content.of(1), tx -> 0));
            clock.advance(Duration.ofDays(2));
            inbox.retention().purge();
            assertThrows(StaleMessageException.class,
                    () -> inbox.apply("snack-5", Content.of(1), clock.instant().minus(Duration.ofDays(2)), tx -> 0));
            try (HeldWriter held = HeldWriter.hold(inbox, "snack-6")) {
                assertThrows(InboxBusyException.class, () -> inbox.apply("snack-7", Content.of(1), tx -> 0));
                assertInstanceOf(Outcome.Applied.class, held.release());
            }

            assertEquals(List.of(0.0, 1.0, 2.0), appliedSeenInsideEffect, "an applied call is counted only after its commit");
            Map<String, Double> expected = new TreeMap<>(Map.of("applied", 4.0, "duplicate", 2.0, "conflict", 1.0,
                    "failed", 1.0, "invalid", 1.0, "stale", 1.0, "busy", 1.0, "unknown", 0.0));
            assertEquals(expected, allMessages());
            InboxStats stats = inbox.stats();
            assertEquals(Map.of("applied", (double) stats.applied(), "duplicate", (double) stats.duplicates(),
                            "conflict", (double) stats.conflicts(), "failed", (double) stats.failed(),
                            "invalid", (double) stats.invalid(), "stale", (double) stats.stale(),
                            "busy", (double) stats.busy()),
                    allMessages().entrySet().stream().filter(e -> !e.getKey().equals("unknown"))
                            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)),
                    "the meters agree with the inbox's own counters");
            // Every call whose work began in a transaction: all but the invalid and the busy one.
            assertEquals(9, registry.get("inbox.apply.queue").timer().count());
            assertEquals(9, registry.get("inbox.apply.transaction").timer().count());
        }
        assertOneTagKeySetPerNameAndNoIds(Set.of("snack-1", "snack-2", "snack-3", "snack-4", "snack-5", "snack-6",
                "snack-7"));
    }

    private void assertOneTagKeySetPerNameAndNoIds(Set<String> ids) {
        Map<String, Set<String>> keysByName = new HashMap<>();
        for (Meter meter : registry.getMeters()) {
            Set<String> keys = meter.getId().getTags().stream().map(Tag::getKey).collect(Collectors.toSet());
            Set<String> first = keysByName.putIfAbsent(meter.getId().getName(), keys);
            assertEquals(first == null ? keys : first, keys, "tag keys of " + meter.getId());
            for (Tag tag : meter.getId().getTags()) {
                assertTrue(!ids.contains(tag.getValue()), "a message id is a tag value of " + meter.getId());
            }
        }
        assertEquals(Set.of("inbox", "outcome"), keysByName.get("inbox.messages"));
        assertEquals(Set.of("inbox"), keysByName.get("inbox.group.size"));
    }

    @Test
    void aLostCommitIsCountedAsUnknownNotAsFailed() {
        metrics.onFailure(INBOX, "snack-1", new OutcomeUnknownException("the commit's answer was lost", null),
                Duration.ofMillis(3));
        metrics.onFailure(INBOX, "snack-2", new IllegalStateException("the effect fails"), Duration.ofMillis(3));

        assertEquals(1.0, messages("unknown"));
        assertEquals(1.0, messages("failed"));
    }

    @Test
    void groupSizesAreRecordedForEachCommittedGroup() throws Exception {
        try (SqliteInbox inbox = open(Duration.ofMinutes(1))) {
            List<CompletableFuture<Outcome<Integer>>> followers = new ArrayList<>();
            try (HeldWriter held = HeldWriter.hold(inbox, "leader")) {
                for (int i = 0; i < 4; i++) {
                    String id = "follower-" + i;
                    followers.add(CompletableFuture.supplyAsync(() -> inbox.apply(id, Content.of(1), tx -> 1),
                            runnable -> new Thread(runnable, id).start()));
                }
                HeldWriter.awaitQueued(inbox, 4);
                held.release();
            }
            for (CompletableFuture<Outcome<Integer>> follower : followers) {
                assertInstanceOf(Outcome.Applied.class, follower.get(HeldWriter.WAIT_SECONDS, TimeUnit.SECONDS));
            }

            DistributionSummary sizes = registry.get("inbox.group.size").tag("inbox", INBOX).summary();
            assertEquals(2, sizes.count(), "the holder's group, then the four that queued behind it");
            assertEquals(5.0, sizes.totalAmount());
            assertEquals(4.0, sizes.max());
            assertEquals(5.0, messages("applied"));
        }
    }

    @Test
    void purgesAndTheHorizonsAgeFollowTheRetention() {
        try (SqliteInbox inbox = open(Duration.ofSeconds(5))) {
            metrics.bind(inbox);
            double unknownAge = registry.get("inbox.retention.horizon.age").timeGauge().value(TimeUnit.SECONDS);
            assertTrue(Double.isNaN(unknownAge), "no horizon before the first purge, was " + unknownAge);
            for (String id : List.of("snack-1", "snack-2", "snack-3")) {
                inbox.apply(id, Content.of(1), tx -> 0);
            }

            clock.advance(Duration.ofDays(2));
            inbox.retention().purge();
            clock.advance(Duration.ofHours(1));

            assertEquals(1.0, registry.get("inbox.purges").counter().count());
            assertEquals(3.0, registry.get("inbox.purge.rows").counter().count());
            assertEquals(Duration.ofDays(1).plusHours(1).toSeconds(),
                    registry.get("inbox.retention.horizon.age").timeGauge().value(TimeUnit.SECONDS));
        }
        // Another process, or this one after a restart, reads the horizon from the database.
        SimpleMeterRegistry restarted = new SimpleMeterRegistry();
        InboxMetrics again = InboxMetrics.of(restarted, clock);
        try (SqliteInbox inbox = SqliteInbox.builder(dir.resolve("metrics.db")).name(INBOX).clock(clock)
                .retention(Duration.ofDays(1)).listener(again).build()) {
            again.bind(inbox);
            assertEquals(Duration.ofDays(1).plusHours(1).toSeconds(),
                    restarted.get("inbox.retention.horizon.age").timeGauge().value(TimeUnit.SECONDS));
            assertEquals(0.0, restarted.get("inbox.purge.rows").counter().count());
        }
    }
}
