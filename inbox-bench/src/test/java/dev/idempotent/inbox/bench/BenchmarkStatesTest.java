package dev.idempotent.inbox.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.examples.StockLevel;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs each benchmark's setup, one operation of every side and the teardown once, on small data:
 * proves the states open and close cleanly without running the benchmarks themselves.
 */
class BenchmarkStatesTest {

    @TempDir
    Path parent;

    @Test
    void inboxAndBaselineApplyNewIdsAndLeaveNoFilesBehind() throws Exception {
        SingleApplyBenchmark bench = new SingleApplyBenchmark();
        SingleApplyBenchmark.Database db = new SingleApplyBenchmark.Database();
        db.open(parent, 0, null);
        try {
            assertTrue(bench.jdbc(db));
            assertTrue(bench.jdbcUnprepared(db));
            assertInstanceOf(Outcome.Applied.class, bench.inbox(db));
            assertInstanceOf(Outcome.Applied.class, bench.inboxPreparedEffect(db));
            long total = db.inbox().jdbi().withHandle(h ->
                    h.createQuery("SELECT total FROM stock WHERE id = 1").mapTo(Long.class).one());
            assertEquals(4 * SqliteState.QUANTITY, total);
        } finally {
            db.close();
        }
        assertDirectoryEmpty();
    }

    @Test
    void duplicatesAreRecognisedByBothSides() throws Exception {
        DuplicateBenchmark bench = new DuplicateBenchmark();
        DuplicateBenchmark.Database db = new DuplicateBenchmark.Database();
        db.open(parent, DuplicateBenchmark.STORED, Ids::random);
        try {
            assertFalse(bench.jdbc(db));
            assertInstanceOf(Outcome.Duplicate.class, bench.inbox(db));
        } finally {
            db.close();
        }
        assertDirectoryEmpty();
    }

    @Test
    void prefilledFileHoldsTheRowsAndTakesNewOnes() throws Exception {
        PrefilledBenchmark bench = new PrefilledBenchmark();
        PrefilledBenchmark.Database db = new PrefilledBenchmark.Database();
        db.rows = 1_000;
        db.open(parent, db.rows, row -> Ids.spread(row, db.rows));
        try {
            assertInstanceOf(Outcome.Applied.class, bench.inbox(db));
            assertEquals(1_001, storedRows(db));
            String mode = db.inbox().jdbi().withHandle(h ->
                    h.createQuery("PRAGMA journal_mode").mapTo(String.class).one());
            assertEquals("wal", mode);
        } finally {
            db.close();
        }
        assertDirectoryEmpty();
    }

    @Test
    void pairedPrefilledStateTimesTheEmptyAndTheFullFileApart() throws Exception {
        PrefilledBenchmark.Databases db = new PrefilledBenchmark.Databases();
        db.rows = 1_000;
        db.prefilled.open(parent, db.rows, row -> Ids.spread(row, db.rows));
        db.empty.open(parent, 0, null);
        PrefilledBenchmark.SideTimes times = new PrefilledBenchmark.SideTimes();
        try {
            assertTrue(new PrefilledBenchmark().paired(db, times));
            assertTrue(new PrefilledBenchmark().paired(db, times));
            assertTrue(times.emptyNanos > 0 && times.prefilledNanos > 0);
            assertEquals(2, storedRows(db.empty));
            assertEquals(1_002, storedRows(db.prefilled));
        } finally {
            db.tearDown();
        }
        assertDirectoryEmpty();
    }

    private static long storedRows(SqliteState side) {
        return side.inbox().jdbi().withHandle(h ->
                h.createQuery("SELECT count(*) FROM inbox_message").mapTo(Long.class).one());
    }

    @Test
    void storedResultSidesStoreAResultOnlyOnTheStoringSideOnEachDatabase() throws Exception {
        for (StoredResultBenchmark.Database database : StoredResultBenchmark.Database.values()) {
            StoredResultBenchmark bench = new StoredResultBenchmark();
            StoredResultBenchmark.Sides sides = new StoredResultBenchmark.Sides();
            sides.database = database;
            sides.synchronousCommit = "off";
            sides.setUp();
            try {
                StoredResultBenchmark.SideTimes times = new StoredResultBenchmark.SideTimes();
                assertTrue(bench.firstApply(sides, times));
                assertEquals(StoredResultBenchmark.RESULT_BYTES, bench.duplicate(sides, times));
                assertTrue(times.storedNanos > 0 && times.plainNanos > 0);
                Jdbi jdbi = ((JdbiInbox) sides.inbox).jdbi();
                // The fill's ids and the one new id of each side: only the storing side's carry 1 KiB.
                assertEquals(StoredResultBenchmark.STORED + 1, (long) jdbi.withHandle(h -> h.createQuery(
                        "SELECT count(*) FROM inbox_message WHERE result IS NULL").mapTo(Long.class).one()), database.name());
                assertEquals(StoredResultBenchmark.STORED + 1, (long) jdbi.withHandle(h -> h.createQuery(
                        "SELECT count(*) FROM inbox_message WHERE length(result) = 1024").mapTo(Long.class).one()),
                        database.name());
                if (database == StoredResultBenchmark.Database.POSTGRESQL) {
                    assertEquals("off", jdbi.withHandle(h -> h.createQuery("SHOW synchronous_commit")
                            .mapTo(String.class).one()));
                }
            } finally {
                sides.tearDown();
            }
        }
    }

    @Test
    void concurrentStateServesBothSides() throws Exception {
        ConcurrentBenchmark bench = new ConcurrentBenchmark();
        ConcurrentBenchmark.Database db = new ConcurrentBenchmark.Database();
        db.open(parent, 0, null);
        try {
            assertTrue(bench.jdbc01(db));
            assertInstanceOf(Outcome.Applied.class, bench.inbox01(db));
        } finally {
            db.close();
        }
        assertDirectoryEmpty();
    }

    @Test
    void concurrentStateOpensTheInboxInEachCommitMode() throws Exception {
        ConcurrentBenchmark bench = new ConcurrentBenchmark();
        for (CommitMode mode : CommitMode.values()) {
            ConcurrentBenchmark.Database db = new ConcurrentBenchmark.Database();
            db.location = Location.DISK;
            db.commitMode = mode;
            db.open(parent, 0, null, mode);
            try {
                assertEquals(mode, db.inbox().settings().commitMode());
                assertInstanceOf(Outcome.Applied.class, bench.inbox08(db));
                assertInstanceOf(Outcome.Applied.class, bench.inbox32(db));
                long total = db.inbox().jdbi().withHandle(h ->
                        h.createQuery("SELECT total FROM stock WHERE id = 1").mapTo(Long.class).one());
                assertEquals(2 * SqliteState.QUANTITY, total, mode.name());
            } finally {
                db.close();
            }
            assertDirectoryEmpty();
        }
    }

    @Test
    void concurrentStateCommitsInGroupsUnlessAskedOtherwise() {
        assertEquals(CommitMode.GROUP, new ConcurrentBenchmark.Database().commitMode);
    }

    @Test
    void pairedStateKeepsTheSidesOnSeparateFiles() throws Exception {
        PairedBenchmark.Databases db = new PairedBenchmark.Databases();
        db.pair = "PREPARED_EFFECT_VS_JDBC";
        db.inboxSide.open(parent, 0, null);
        db.jdbcSide.open(parent, 0, null);
        PairedBenchmark.SideTimes times = new PairedBenchmark.SideTimes();
        try {
            assertTrue(new PairedBenchmark().newIds(db, times));
            assertTrue(new PairedBenchmark().newIds(db, times));
            assertTrue(times.inboxNanos > 0 && times.jdbcNanos > 0);
            assertFalse(db.inboxSide.file().equals(db.jdbcSide.file()));
        } finally {
            db.tearDown();
        }
        assertDirectoryEmpty();
    }

    @Test
    void batchAndSyncLoopsRun() throws Exception {
        BatchBenchmark.Database db = new BatchBenchmark.Database();
        db.size = 10;
        db.open(parent, 0, null);
        try {
            assertEquals(10, new BatchBenchmark().jdbc(db));
            db.effect = "JDBI";
            assertEquals(10, new BatchBenchmark().inbox(db));
            db.effect = "PREPARED";
            assertEquals(10, new BatchBenchmark().inbox(db));
            long total = db.inbox().jdbi().withHandle(h ->
                    h.createQuery("SELECT total FROM stock WHERE id = 1").mapTo(Long.class).one());
            assertEquals(30 * SqliteState.QUANTITY, total);
        } finally {
            db.close();
        }
        SyncRateBenchmark.SyncFile file = new SyncRateBenchmark.SyncFile();
        file.open(parent);
        file.writeAndSync();
        file.close();
        assertDirectoryEmpty();
    }

    @Test
    void pairedBatchesApplyEveryMessageOnBothSides() throws Exception {
        PairedBenchmark.BatchDatabases db = new PairedBenchmark.BatchDatabases();
        db.size = 10;
        db.effect = "JDBI";
        db.baseline = "PLAIN";
        db.inboxSide.open(parent, 0, null);
        db.jdbcSide.open(parent, 0, null);
        PairedBenchmark.SideTimes times = new PairedBenchmark.SideTimes();
        try {
            assertEquals(20, new PairedBenchmark().batches(db, times));
            db.effect = "PREPARED";
            db.baseline = "SAVEPOINTS";
            assertEquals(20, new PairedBenchmark().batches(db, times));
            assertTrue(times.inboxNanos > 0 && times.jdbcNanos > 0);
        } finally {
            db.tearDown();
        }
        assertDirectoryEmpty();
    }

    @Test
    void postgresStateServesBothSidesAndDropsItsSchemas() throws Exception {
        PostgresBenchmark.Database db = new PostgresBenchmark.Database();
        db.effect = "PREPARED";
        setUpOrAbort(db::setUp);
        try {
            PostgresBenchmark.SideTimes times = new PostgresBenchmark.SideTimes();
            long inboxServerBefore = db.inboxServerCpuNanos();
            long jdbcServerBefore = db.jdbcServerCpuNanos();
            assertTrue(PostgresBenchmark.pair(db, times));
            db.baseline = "WITH_SETTINGS";
            assertTrue(PostgresBenchmark.pair(db, times));
            assertTrue(times.inboxNanos > 0 && times.jdbcNanos > 0);
            assertTrue(times.inboxCpuNanos > 0 && times.jdbcCpuNanos > 0);
            assertTrue(times.inboxCpuNanos <= times.inboxNanos && times.jdbcCpuNanos <= times.jdbcNanos);
            // The server runs on this machine here, so each side's sessions show the work they did.
            assertTrue(db.inboxServerCpuNanos() > inboxServerBefore);
            assertTrue(db.jdbcServerCpuNanos() > jdbcServerBefore);
            assertEquals(2 * SqliteState.QUANTITY, stockTotal(db));
        } finally {
            db.tearDown();
        }
    }

    @Test
    void postgresPeersApplyEveryMessageOnEverySideAndDropTheirDatabase() throws Exception {
        PostgresPeersBenchmark.Database db = new PostgresPeersBenchmark.Database();
        db.synchronousCommit = "off";
        db.sides = java.util.Arrays.stream(PostgresPeers.Side.values()).map(Enum::name)
                .collect(java.util.stream.Collectors.joining("+"));
        setUpOrAbort(db::setUp);
        String database = db.peers.database();
        try {
            PostgresPeersBenchmark.SideTimes times = new PostgresPeersBenchmark.SideTimes();
            PostgresPeersBenchmark bench = new PostgresPeersBenchmark();
            assertEquals(db.chosen.length, bench.round01(db, times));
            assertEquals(db.chosen.length, bench.round01(db, times));

            assertTrue(times.jdbcWall() > 0 && times.inboxWall() > 0 && times.springIntegrationWall() > 0
                    && times.camelWall() > 0 && times.jdbcWithClientWorkWall() > 0);
            assertTrue(times.inboxCpu() > 0 && times.inboxCpu() <= times.inboxWall());
            // Sides that share a pool share its stock row: two rounds of 7 each.
            assertEquals(2 * 7 * 3, db.peers.stockTotal(PostgresPeers.Side.JDBC), "JDBC, with settings, with work");
            assertEquals(2 * 7 * 2, db.peers.stockTotal(PostgresPeers.Side.INBOX), "the inbox, both effects");
            assertEquals(2 * 7 * 2, db.peers.stockTotal(PostgresPeers.Side.INBOX_ROW), "the inbox's row by hand");
            assertEquals(2 * 7, db.peers.stockTotal(PostgresPeers.Side.SPRING_INTEGRATION));
            assertEquals(2 * 7, db.peers.stockTotal(PostgresPeers.Side.CAMEL));
            for (PostgresPeers.Side side : PostgresPeers.Side.values()) {
                assertTrue(db.peers.applier(side).apply("stored-once-" + side), side + ": a new id");
                assertFalse(db.peers.applier(side).apply("stored-once-" + side), side + ": its duplicate");
            }
            assertEquals("off", db.peers.setting(PostgresPeers.Side.INBOX, "synchronous_commit"));
        } finally {
            db.tearDown();
        }
        try (java.sql.Connection admin = java.sql.DriverManager.getConnection(PostgresState.URL, PostgresState.USER, null);
             java.sql.PreparedStatement exists = admin.prepareStatement("SELECT count(*) FROM pg_database WHERE datname = ?")) {
            exists.setString(1, database);
            try (java.sql.ResultSet count = exists.executeQuery()) {
                count.next();
                assertEquals(0, count.getInt(1), "the run's database dropped");
            }
        }
    }

    @Test
    void mariaDbStateServesBothSidesAndDropsItsDatabases() throws Exception {
        MariaDbBenchmark.Database db = new MariaDbBenchmark.Database();
        db.setUp();
        try {
            MariaDbBenchmark.SideTimes times = new MariaDbBenchmark.SideTimes();
            assertTrue(MariaDbBenchmark.pair(db, times));
            db.baseline = "WITH_SETTINGS";
            assertTrue(MariaDbBenchmark.pair(db, times));
            assertTrue(times.inboxNanos > 0 && times.jdbcNanos > 0);
            long total = db.inbox().jdbi().withHandle(h ->
                    h.createQuery("SELECT total FROM stock WHERE id = 1").mapTo(Long.class).one());
            assertEquals(2 * SqliteState.QUANTITY, total);
            assertTrue(db.jdbc().applyWithSettings("stored-once", SqliteState.QUANTITY), "a new id on the baseline");
            assertFalse(db.jdbc().apply("stored-once", SqliteState.QUANTITY), "the baseline sees its duplicate");
            assertFalse(db.jdbc().applyWithSettings("stored-once", SqliteState.QUANTITY));
            assertEquals(db.databases(), existing(db.databases()));
        } finally {
            db.tearDown();
        }
        assertEquals(List.of(), existing(db.databases()), "both databases dropped");
    }

    /** Those of {@code names} that are databases on the MariaDB server, in the same order. */
    private static List<String> existing(List<String> names) {
        List<String> present = org.jdbi.v3.core.Jdbi.create("jdbc:mariadb://" + MariaDbState.SERVER + "/",
                        MariaDbState.USER, MariaDbState.PASSWORD)
                .withHandle(h -> h.createQuery("SELECT schema_name FROM information_schema.schemata")
                        .mapTo(String.class).list());
        return names.stream().filter(present::contains).toList();
    }

    @Test
    void postgresGroupCommitStateAppliesThroughTheGroupingInbox() throws Exception {
        PostgresConcurrentBenchmark.Database db = new PostgresConcurrentBenchmark.Database();
        db.writer = "INBOX_GROUP_COMMIT";
        setUpOrAbort(db::setUp);
        try {
            assertTrue(db.apply());
            assertTrue(db.apply());
            assertEquals(2 * SqliteState.QUANTITY, stockTotal(db));
        } finally {
            db.tearDown();
        }
    }

    @Test
    void httpAndInProcessSidesConfirmEveryMessageOnTheirOwnFiles() throws Exception {
        HttpWarehouseBenchmark bench = new HttpWarehouseBenchmark();
        HttpWarehouseBenchmark.Receiver receiver = new HttpWarehouseBenchmark.Receiver();
        receiver.serverThreads = 8;
        HttpWarehouseBenchmark.Direct direct = new HttpWarehouseBenchmark.Direct();
        int threads = 4;
        int callsEach = 5;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            receiver.open(parent);
            direct.open(parent);
            List<Future<?>> calls = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String client = t % 2 == 0 ? "OWN" : "SHARED";
                calls.add(pool.submit(() -> {
                    HttpWarehouseBenchmark.PublisherConnection publisher = new HttpWarehouseBenchmark.PublisherConnection();
                    publisher.client = client;
                    publisher.setUp();
                    for (int i = 0; i < callsEach; i++) {
                        assertEquals(16, bench.http(receiver, publisher).length());
                        assertInstanceOf(Outcome.Applied.class, bench.inProcess(direct));
                    }
                    return null;
                }));
            }
            for (Future<?> call : calls) {
                call.get(30, TimeUnit.SECONDS);
            }
            long sent = threads * callsEach;
            assertEquals(sent, receiver.confirmedCount());
            assertEquals(new StockLevel(sent * HttpWarehouseBenchmark.QUANTITY, sent), receiver.warehouse().stock());
            assertEquals(new StockLevel(sent * HttpWarehouseBenchmark.QUANTITY, sent), direct.warehouse().stock());
        } finally {
            pool.shutdownNow();
            receiver.tearDown();
            direct.tearDown();
        }
        assertDirectoryEmpty();
    }

    @Test
    void aStockThatDoesNotMatchTheConfirmedCountFailsTheTeardown() throws Exception {
        HttpWarehouseBenchmark.Direct direct = new HttpWarehouseBenchmark.Direct();
        direct.open(parent);
        // Applied, but never counted as confirmed.
        direct.warehouse().receive("uncounted", HttpWarehouseBenchmark.QUANTITY);
        assertThrows(IllegalStateException.class, direct::tearDown);
        assertDirectoryEmpty();
    }

    @Test
    void onlyAVerifiedAckOfANewIdCounts() {
        HttpWarehouseBenchmark.verifyAck("a", 200, utf8("{\"protocol\":1,\"id\":\"a\",\"accepted\":true,\"applied\":true}"));
        Map<String, Integer> refused = new LinkedHashMap<>();
        refused.put("{\"protocol\":1,\"id\":\"a\",\"accepted\":true,\"applied\":false}", 200);
        refused.put("{\"protocol\":1,\"id\":\"a\",\"accepted\":\"true\",\"applied\":true}", 200);
        refused.put("{\"protocol\":1,\"id\":\"a\",\"accepted\":1,\"applied\":true}", 200);
        refused.put("{\"protocol\":1,\"id\":\"a\",\"applied\":true}", 200);
        refused.put("{\"protocol\":1,\"id\":\"b\",\"accepted\":true,\"applied\":true}", 200);
        refused.put("{\"protocol\":2,\"id\":\"a\",\"accepted\":true,\"applied\":true}", 200);
        refused.put("{\"id\":\"a\",\"accepted\":true,\"applied\":true}", 200);
        refused.put("[]", 200);
        refused.put("ok", 200);
        refused.put("", 200);
        refused.put("{\"protocol\":1,\"id\":\"a\",\"accepted\":false,\"error\":\"busy\",\"message\":\"later\"}", 503);
        refused.forEach((body, status) -> assertThrows(IllegalStateException.class,
                () -> HttpWarehouseBenchmark.verifyAck("a", status, utf8(body)), body));
        assertThrows(IllegalStateException.class, () -> HttpWarehouseBenchmark.verifyAck("a", 202,
                utf8("{\"protocol\":1,\"id\":\"a\",\"accepted\":true,\"applied\":true}")));
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The PostgreSQL states' set-up, or the test aborted when no server answers. */
    private static void setUpOrAbort(PostgresSetUp setUp) {
        try {
            setUp.run();
        } catch (java.sql.SQLException | RuntimeException unreachable) {
            org.junit.jupiter.api.Assumptions.abort("no PostgreSQL server at " + PostgresState.URL + ": " + unreachable);
        }
    }

    private interface PostgresSetUp {
        void run() throws java.sql.SQLException;
    }

    private static long stockTotal(PostgresState db) {
        return db.inbox().jdbi().withHandle(h ->
                h.createQuery("SELECT total FROM stock WHERE id = 1").mapTo(Long.class).one());
    }

    @Test
    void spreadIdsAscendAndRandomIdsDiffer() {
        assertTrue(Ids.spread(0, 3).compareTo(Ids.spread(1, 3)) < 0);
        assertTrue(Ids.spread(1, 3).compareTo(Ids.spread(2, 3)) < 0);
        assertEquals(16, Ids.random(1).length());
        assertFalse(Ids.random(1).equals(Ids.random(2)));
    }

    private void assertDirectoryEmpty() throws Exception {
        try (Stream<Path> left = Files.list(parent)) {
            assertEquals(0, left.count(), "benchmark files left behind");
        }
    }
}
