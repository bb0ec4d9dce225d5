package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.PurgeReport;
import dev.idempotent.inbox.examples.crash.ChildJvm;
import dev.idempotent.inbox.examples.crash.CrashReceiver;
import dev.idempotent.inbox.examples.crash.StockView;
import dev.idempotent.inbox.examples.http.AckFault;
import dev.idempotent.inbox.examples.http.Http;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import dev.idempotent.inbox.examples.publisher.Attempt;
import dev.idempotent.inbox.examples.publisher.DeliveryListener;
import dev.idempotent.inbox.examples.publisher.DeliveryReport;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.Outbox;
import dev.idempotent.inbox.examples.publisher.OutboxItem;
import dev.idempotent.inbox.examples.publisher.Publisher;
import dev.idempotent.inbox.examples.publisher.PublisherSettings;
import dev.idempotent.inbox.examples.publisher.Verdict;
import dev.idempotent.inbox.testkit.MutableClock;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each mutation of the protocol model ({@code docs/model/receipts.pml}) has a counterexample: a
 * run in which the mutated protocol breaks a property. These tests drive the real publisher and
 * receiver through the same run and show that the real code keeps the property. The model's
 * invariant "an item marked done has its effect committed" is checked at every point the run
 * stops, through connections of the test's own to both SQLite files.
 *
 * <p>A publisher crash is the publisher's run interrupted right after the attempt the
 * counterexample names ({@link Publisher#deliverPending} leaves items in flight pending), its
 * outbox closed and opened again: what survives is what the outbox file holds, which the test
 * reads first. A receiver crash is a real halt of a child JVM ({@link HaltingReceiver}) or, where
 * the counterexample crashes it between requests, the warehouse closed and opened again on the
 * same file.
 */
class ModelCounterexampleTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String INBOX = SqliteWarehouse.INBOX;

    @TempDir
    Path dir;

    /**
     * Mutation ACK_BEFORE_COMMIT. Its counterexample: the receiver answers before it commits, the
     * publisher marks the item done, and the commit is lost to a receiver crash. The real receiver
     * is halted after the effect and before the commit (EFFECT_DONE), and after the commit before
     * the answer (COMMITTED): neither sends an ACK, the item stays pending, and the resend is
     * applied (or confirmed as a duplicate) exactly once.
     */
    @ParameterizedTest(name = "receiver halted at {0}")
    @EnumSource(value = Phase.class, names = {"EFFECT_DONE", "COMMITTED"})
    void receiverThatCrashesAroundItsCommitNeverAcknowledgesFirst(Phase phase) throws Exception {
        Path warehouseFile = dir.resolve("warehouse.db");
        Path outboxFile = dir.resolve("outbox.db");
        try (Outbox outbox = Outbox.open(outboxFile)) {
            outbox.enqueue("box-1", 7);
        }
        FirstAttempt first;
        int status;
        // A halted JVM cannot delete sqlite-jdbc's unpacked native library; keep it in the test's directory.
        try (ChildJvm receiver = ChildJvm.start("halting-receiver", List.of("-Dorg.sqlite.tmpdir=" + dir),
                HaltingReceiver.class.getName(), List.of(warehouseFile.toString(), phase.name(), "box-1"))) {
            URI uri = URI.create(receiver.awaitLine(line -> line.startsWith(HaltingReceiver.READY), TIMEOUT)
                    .substring(HaltingReceiver.READY.length() + 1));
            first = firstAttemptThenCrash(outboxFile, uri, attempt -> {});
            assertEquals(HaltingReceiver.HALTING + " " + phase + " box-1",
                    receiver.awaitLine(line -> line.startsWith(HaltingReceiver.HALTING), TIMEOUT));
            status = receiver.awaitExit(TIMEOUT);
        }
        assertEquals(CrashReceiver.HALT_STATUS, status, "halted, not exited");

        Attempt attempt = first.attempt();
        assertTrue(attempt.status().isEmpty(), "no answer of any kind: " + attempt);
        assertInstanceOf(Verdict.Uncertain.class, attempt.verdict());
        assertEquals(ItemState.PENDING, attempt.state());
        StockView.Snapshot atCrash = StockView.read(warehouseFile, INBOX);
        OutboxRow outboxAtCrash = OutboxRow.read(outboxFile, "box-1");
        assertEquals("pending", outboxAtCrash.state(), "not marked: no ACK came");
        boolean committed = phase == Phase.COMMITTED;
        assertEquals(committed ? new StockView.Snapshot(7, Set.of("box-1")) : new StockView.Snapshot(0, Set.of()),
                atCrash, "the halt keeps a commit and loses an open transaction");

        try (Warehouse warehouse = Warehouse.open(warehouseFile);
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback());
                Outbox outbox = Outbox.open(outboxFile)) {
            DeliveryReport report = new Publisher(outbox, settings(server.uri()), DeliveryListener.NONE).deliverPending();
            assertEquals(1, report.acked());
            assertEquals(committed ? 1 : 0, report.duplicatesConfirmed(), "the resend of a commit is a duplicate");
            assertEquals(ItemState.ACKED, outbox.find("box-1").orElseThrow().state());
        }
        assertEquals(new StockView.Snapshot(7, Set.of("box-1")), StockView.read(warehouseFile, INBOX),
                "applied exactly once");
        System.out.printf("[model] ACK_BEFORE_COMMIT, real receiver halted at %s: no ACK, outbox %s, warehouse total %d"
                + " rows %d; after the resend total 7, rows 1%n", phase, outboxAtCrash.state(), atCrash.total(), atCrash.rows());
    }

    /**
     * Mutation ACCEPT_ANY_200. Its counterexample: a proxy answers the publisher's request itself
     * with a 200 that does not verify, and the publisher marks an item the warehouse never saw.
     * The real publisher gets a 200 with {@code "accepted":"true"}, then a well-formed ACK that
     * names another id, and marks the item only after the receiver's own ACK.
     */
    @Test
    void publisherMarksNothingOnA200ThatDoesNotVerify() throws Exception {
        Path warehouseFile = dir.resolve("warehouse.db");
        List<String> seen = new CopyOnWriteArrayList<>();
        try (Warehouse warehouse = Warehouse.open(warehouseFile);
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback());
                AnsweringProxy proxy = new AnsweringProxy(server.uri(), List.of(
                        "{\"protocol\":1,\"id\":\"box-1\",\"accepted\":\"true\",\"applied\":true}",
                        "{\"protocol\":1,\"id\":\"box-2\",\"accepted\":true,\"applied\":true}"));
                Outbox outbox = Outbox.open(dir.resolve("outbox.db"))) {
            outbox.enqueue("box-1", 7);
            DeliveryListener listener = attempt -> seen.add(attempt.number() + " " + attempt.state() + " "
                    + attempt.verdict().getClass().getSimpleName() + " " + StockView.read(warehouseFile, INBOX));
            PublisherSettings settings = settings(proxy.uri()).withBackoff(Duration.ofMillis(1), Duration.ofMillis(5));
            DeliveryReport report = new Publisher(outbox, settings, listener).deliverPending();

            assertEquals(1, report.acked());
            assertEquals(3, report.attempts());
            assertEquals(1, proxy.forwarded(), "only the third request reached the receiver");
            // At each attempt: what the outbox said, and what the warehouse held at that moment.
            assertEquals(List.of(
                    "1 PENDING Uncertain " + new StockView.Snapshot(0, Set.of()),
                    "2 PENDING Uncertain " + new StockView.Snapshot(0, Set.of()),
                    "3 ACKED Acked " + new StockView.Snapshot(7, Set.of("box-1"))), seen);
            assertEquals(new StockView.Snapshot(7, Set.of("box-1")), StockView.read(warehouseFile, INBOX));
        }
        System.out.printf("[model] ACCEPT_ANY_200: %s%n", seen);
    }

    /**
     * Mutation PURGE_VOLATILE. Its counterexample: a shipment is applied, its ACK is lost, the
     * purge deletes its row and raises the horizon, the receiver crashes and forgets the horizon,
     * and the resend is applied again. The real receiver, restarted after the purge, still knows
     * its horizon and refuses the resend as stale; the publisher parks it.
     */
    @Test
    void resendAfterAPurgeAndARestartIsRefusedAsStale() throws Exception {
        Instant t0 = Instant.parse("2026-01-05T10:00:00Z");
        MutableClock clock = new MutableClock(t0);
        Duration retention = Duration.ofDays(7);
        Path warehouseFile = dir.resolve("warehouse.db");
        Path outboxFile = dir.resolve("outbox.db");
        try (Outbox outbox = Outbox.open(outboxFile, clock)) {
            outbox.enqueue("crate-1", 5);
        }
        FirstAttempt first;
        try (Warehouse warehouse = Warehouse.open(warehouseFile, builder -> builder.clock(clock).retention(retention));
                WarehouseServer server = WarehouseServer.start(warehouse,
                        ReceiverSettings.loopback().withAckFault(AckFault.first(1)))) {
            first = firstAttemptThenCrash(outboxFile, server.uri(), clock, attempt -> {});
            assertTrue(first.attempt().status().isEmpty(), "the ACK was lost: " + first.attempt());
            assertEquals(new StockLevel(5, 1), warehouse.stock(), "applied once");

            clock.advance(Duration.ofDays(8));
            PurgeReport purge = warehouse.retention().purge();
            assertEquals(1, purge.rowsPurged());
            assertEquals(t0.plus(Duration.ofDays(1)), purge.horizon());
        }
        // The receiver crashes: everything it held in memory is gone, the file stays.
        try (Warehouse warehouse = Warehouse.open(warehouseFile, builder -> builder.clock(clock).retention(retention));
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback());
                Outbox outbox = Outbox.open(outboxFile, clock)) {
            assertEquals(t0.plus(Duration.ofDays(1)), warehouse.retention().status().horizon().orElseThrow(),
                    "the horizon survived the restart");
            DeliveryReport report = new Publisher(outbox, settings(server.uri()), DeliveryListener.NONE).deliverPending();
            assertEquals(1, report.rejected(), report.toString());
            OutboxItem item = outbox.find("crate-1").orElseThrow();
            assertEquals(ItemState.REJECTED, item.state());
            assertTrue(item.reason().startsWith("HTTP 422 stale"), item.reason());
            assertEquals(new StockLevel(5, 0), warehouse.stock(), "refused, not applied again");
            System.out.printf("[model] PURGE_VOLATILE: after purge and restart, horizon %s; the resend: %s; total %d%n",
                    warehouse.retention().status().horizon().orElseThrow(), item.reason(), warehouse.total());
        }
    }

    /**
     * Mutation MARK_BEFORE_VERIFY. Its counterexample: a proxy answers with a well-formed ACK for
     * another id, the publisher writes the mark as the response arrives, before it verifies it,
     * and a crash keeps that mark. The real publisher, stopped right after that response, has
     * written no mark: the outbox file holds the item pending, and the resend after the restart
     * is applied once and only then marked.
     */
    @Test
    void publisherCrashedAfterAnUnverifiedResponseHasNoMark() throws Exception {
        Path warehouseFile = dir.resolve("warehouse.db");
        Path outboxFile = dir.resolve("outbox.db");
        try (Outbox outbox = Outbox.open(outboxFile)) {
            outbox.enqueue("box-1", 7);
        }
        AtomicReference<OutboxRow> outboxAtResponse = new AtomicReference<>();
        AtomicReference<StockView.Snapshot> warehouseAtResponse = new AtomicReference<>();
        try (Warehouse warehouse = Warehouse.open(warehouseFile);
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback())) {
            FirstAttempt first;
            try (AnsweringProxy proxy = new AnsweringProxy(server.uri(),
                    List.of("{\"protocol\":1,\"id\":\"box-2\",\"accepted\":true,\"applied\":true}"))) {
                // Read both files at the first point the publisher reaches after the response.
                first = firstAttemptThenCrash(outboxFile, proxy.uri(), attempt -> {
                    outboxAtResponse.set(OutboxRow.read(outboxFile, "box-1"));
                    warehouseAtResponse.set(StockView.read(warehouseFile, INBOX));
                });
            }
            assertEquals(200, first.attempt().status().orElseThrow());
            assertInstanceOf(Verdict.Uncertain.class, first.attempt().verdict());
            assertEquals(new OutboxRow("pending", 1), outboxAtResponse.get(), "no mark for an unverified 200");
            assertEquals(new StockView.Snapshot(0, Set.of()), warehouseAtResponse.get());
            assertEquals(new OutboxRow("pending", 1), OutboxRow.read(outboxFile, "box-1"), "what the crash leaves");

            try (Outbox outbox = Outbox.open(outboxFile)) {
                DeliveryReport report = new Publisher(outbox, settings(server.uri()), DeliveryListener.NONE).deliverPending();
                assertEquals(1, report.acked());
                assertEquals(0, report.duplicatesConfirmed(), "the warehouse had never seen it");
            }
            assertEquals(new OutboxRow("acked", 2), OutboxRow.read(outboxFile, "box-1"));
            assertEquals(new StockView.Snapshot(7, Set.of("box-1")), StockView.read(warehouseFile, INBOX));
        }
        System.out.printf("[model] MARK_BEFORE_VERIFY: at the unverified 200 the outbox held %s, the warehouse %s%n",
                outboxAtResponse.get(), warehouseAtResponse.get());
    }

    /**
     * Mutation CONFLICT_OVERWRITES. Its counterexample: another sender's shipment with the same id
     * and another quantity is applied first, and the publisher's conflicting one replaces it. The
     * real receiver answers 409, keeps the first shipment, and the publisher parks its item.
     */
    @Test
    void conflictKeepsTheStoredShipment() throws Exception {
        Path warehouseFile = dir.resolve("warehouse.db");
        try (Warehouse warehouse = Warehouse.open(warehouseFile);
                WarehouseServer server = WarehouseServer.start(warehouse, ReceiverSettings.loopback());
                Outbox outbox = Outbox.open(dir.resolve("outbox.db"))) {
            assertEquals(200, new Http(server.uri()).receipt("box-0", 2).status(), "the other sender's shipment");
            outbox.enqueue("box-0", 1);
            DeliveryReport report = new Publisher(outbox, settings(server.uri()), DeliveryListener.NONE).deliverPending();
            assertEquals(1, report.rejected());
            OutboxItem item = outbox.find("box-0").orElseThrow();
            assertEquals(ItemState.REJECTED, item.state());
            assertTrue(item.reason().startsWith("HTTP 409 conflict"), item.reason());
            assertEquals(new StockView.Snapshot(2, Set.of("box-0")), StockView.read(warehouseFile, INBOX),
                    "the first shipment is kept, neither replaced nor added to");
        }
    }

    private static PublisherSettings settings(URI receiver) {
        return PublisherSettings.to(receiver)
                .withMaxAttempts(10)
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(10))
                .withJitterSeed(7);
    }

    /** The first attempt of a publisher run, and what the listener saw at it. */
    private record FirstAttempt(Attempt attempt) {}

    private FirstAttempt firstAttemptThenCrash(Path outboxFile, URI receiver, Consumer<Attempt> atAttempt)
            throws Exception {
        try (Outbox outbox = Outbox.open(outboxFile)) {
            return firstAttemptThenCrash(outbox, receiver, atAttempt);
        }
    }

    private FirstAttempt firstAttemptThenCrash(Path outboxFile, URI receiver, MutableClock clock,
            Consumer<Attempt> atAttempt) throws Exception {
        try (Outbox outbox = Outbox.open(outboxFile, clock)) {
            return firstAttemptThenCrash(outbox, receiver, atAttempt);
        }
    }

    /**
     * Runs the publisher until its first attempt is recorded, then interrupts the run: the crash
     * that loses everything the publisher held in memory. The retry is an hour away, so no second
     * attempt happens first.
     */
    private static FirstAttempt firstAttemptThenCrash(Outbox outbox, URI receiver, Consumer<Attempt> atAttempt)
            throws Exception {
        List<Attempt> attempts = new ArrayList<>();
        CountDownLatch firstDone = new CountDownLatch(1);
        DeliveryListener listener = attempt -> {
            synchronized (attempts) {
                attempts.add(attempt);
            }
            try {
                atAttempt.accept(attempt);
            } finally {
                firstDone.countDown();
            }
        };
        PublisherSettings settings = settings(receiver).withBackoff(Duration.ofHours(1), Duration.ofHours(1));
        Publisher publisher = new Publisher(outbox, settings, listener);
        AtomicReference<Throwable> ended = new AtomicReference<>();
        Thread run = new Thread(() -> {
            try {
                publisher.deliverPending();
            } catch (Throwable e) {
                ended.set(e);
            }
        }, "publisher-run");
        run.start();
        assertTrue(firstDone.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS), "the first attempt was recorded");
        run.interrupt();
        run.join(TIMEOUT.toMillis());
        assertFalse(run.isAlive(), "the interrupted run ended");
        assertInstanceOf(InterruptedException.class, ended.get(), "the run was cut short, not finished");
        synchronized (attempts) {
            assertEquals(1, attempts.size(), "one attempt before the crash");
            return new FirstAttempt(attempts.get(0));
        }
    }

    /** An outbox row as a connection of the test's own reads it from the file. */
    private record OutboxRow(String state, int attempts) {
        static OutboxRow read(Path outboxFile, String id) {
            try (Connection connection = DriverManager.getConnection("jdbc:sqlite:" + outboxFile);
                    PreparedStatement query = connection.prepareStatement(
                            "SELECT state, attempts FROM outbox_item WHERE id = ?")) {
                query.setString(1, id);
                try (ResultSet row = query.executeQuery()) {
                    if (!row.next()) {
                        throw new AssertionError("no outbox row for " + id);
                    }
                    return new OutboxRow(row.getString("state"), row.getInt("attempts"));
                }
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
