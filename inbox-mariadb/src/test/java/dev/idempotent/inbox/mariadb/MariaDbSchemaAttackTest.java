package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Attacks on schema mode CREATE over tables of an older level on MariaDB, where every DDL statement
 * commits by itself and waits for the table's metadata lock: a step that meets a long transaction
 * on the table, concurrent first uses upgrading the same tables, and the statements of the first
 * release on tables this release upgraded.
 */
class MariaDbSchemaAttackTest {

    private final MariaDbFixture fixture = new MariaDbFixture(false, true, false);
    private final List<MariaDbInbox> opened = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        threads.shutdownNow();
        opened.forEach(MariaDbInbox::close);
        fixture.close();
    }

    private InboxTables tables() {
        return InboxTables.prefix("atk_").inSchema(fixture.tablesDatabase());
    }

    /** Brings the tables to the level of {@code steps} steps, as a migration tool would have. */
    private void stepsApplied(int steps) {
        fixture.admin().useHandle(handle -> {
            handle.execute("USE " + fixture.tablesDatabase());
            for (SchemaMigrations.Step step : SchemaMigrations.STEPS.subList(0, steps)) {
                handle.createScript(SchemaMigrations.script(MariaDbStore.class, step, tables())).execute();
            }
        });
    }

    private List<String> schemaRows() {
        return MariaDbMigrationTest.schemaRows(fixture.admin(), tables().schemaTable());
    }

    private MariaDbInbox build(Duration busyTimeout) {
        MariaDbInbox inbox = MariaDbInbox.builder(fixture.jdbi()).name("warehouse").tables(tables())
                .busyTimeout(busyTimeout).build();
        synchronized (opened) {
            opened.add(inbox);
        }
        return inbox;
    }

    /**
     * A step's ALTER TABLE waits for the table's metadata lock, which every open transaction that
     * touched the table holds; MariaDB's lock_wait_timeout for it is a day by default. The first
     * use must give up after the busy timeout, as every other wait of the inbox does, rather than
     * hang the starting instance (and, queued for the lock, every statement on the table behind it).
     */
    @Test
    void aStepMeetingALongTransactionOnTheTableGivesUpAfterTheBusyTimeoutAndChangesNothing() throws Exception {
        stepsApplied(3); // inbox 1.1: step 0.4 alters the table of records
        try (Handle longTransaction = fixture.jdbi().open()) {
            longTransaction.begin();
            longTransaction.createQuery("SELECT COUNT(*) FROM " + tables().messageTable()).mapTo(Long.class).one();

            Future<MariaDbInbox> starting = threads.submit(() -> build(Duration.ofSeconds(1)));
            ExecutionException failed = assertThrows(ExecutionException.class, () -> starting.get(60, TimeUnit.SECONDS),
                    "the first use waited past the busy timeout for the metadata lock");
            assertInstanceOf(InboxBusyException.class, failed.getCause());

            // The long transaction still works, and the tables are as they were.
            assertEquals(0L, longTransaction.createQuery("SELECT COUNT(*) FROM " + tables().messageTable())
                    .mapTo(Long.class).one());
            longTransaction.rollback();
        }
        assertEquals(List.of("inbox=1.1/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows(),
                "the step's UPDATE ran though its ALTER TABLE failed: the tables claim columns they lack");
        assertEquals(List.of(), resultColumns());
        MariaDbInbox inbox = build(Duration.ofSeconds(5));
        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-1", Content.of(1), tx -> 1));
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows());
        assertEquals(List.of("result", "result_type", "result_type_version"), resultColumns());
    }

    private List<String> resultColumns() {
        return fixture.admin().withHandle(handle -> handle.createQuery("SELECT COLUMN_NAME FROM information_schema.COLUMNS"
                        + " WHERE TABLE_SCHEMA = :db AND TABLE_NAME = :table AND COLUMN_NAME LIKE 'result%' ORDER BY 1")
                .bind("db", fixture.tablesDatabase()).bind("table", tables().name("message")).mapTo(String.class).list());
    }

    /** Four instances starting at once on tables of the first release all end on 1.2, each step run once. */
    @Test
    void concurrentFirstUsesUpgradingTheFirstReleasesTablesAllEndAtTheKnownLevel() throws Exception {
        stepsApplied(2); // inbox 1.0 and kafka_offset 1.0: the first release's tables
        fixture.admin().useHandle(handle -> handle.execute("INSERT INTO " + tables().messageTable()
                + " (inbox, id, fingerprint_algorithm, content_type, content_type_version, fingerprint, content,"
                + " received_at) VALUES ('warehouse', 'before', 1, 'inbox.int64', 1, ?, NULL, 1000)", new byte[32]));
        int instances = 4;
        CyclicBarrier start = new CyclicBarrier(instances);
        List<Future<MariaDbInbox>> starting = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            starting.add(threads.submit(() -> {
                start.await();
                return build(Duration.ofSeconds(30));
            }));
        }
        for (Future<MariaDbInbox> instance : starting) {
            MariaDbInbox inbox = instance.get(120, TimeUnit.SECONDS);
            assertTrue(inbox.find("before").isPresent());
        }
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows());
        MariaDbInbox inbox = starting.get(0).get();
        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-2", Content.of(2), tx -> 2));
        assertInstanceOf(Outcome.Duplicate.class, starting.get(3).get().apply("snack-2", Content.of(2), tx -> 2));
    }

    /**
     * The user's own table happens to have the name an inbox's prefix gives its table of records.
     * The inbox has no {@code <prefix>schema} there, so the table is not the inbox's: the first use
     * must refuse before any DDL, rather than skip it (CREATE TABLE IF NOT EXISTS) and then add the
     * result columns to the user's table (each DDL statement committed by itself).
     */
    @Test
    void aUsersOwnTableOfTheNameOfTheInboxsTableIsRefusedWithNothingCreatedOrAltered() {
        String db = fixture.tablesDatabase();
        fixture.admin().useHandle(handle -> handle.execute("CREATE TABLE " + db + ".shop_message"
                + " (order_id INT PRIMARY KEY, note TEXT) ENGINE = InnoDB"));
        InboxTables shop = InboxTables.prefix("shop_").inSchema(db);

        InboxStorageException refused = assertThrows(InboxStorageException.class,
                () -> MariaDbInbox.builder(fixture.jdbi()).name("warehouse").tables(shop).build());
        assertTrue(refused.getMessage().contains("shop_message"), refused.getMessage());
        assertEquals(List.of("note", "order_id"), fixture.admin().withHandle(handle -> handle.createQuery(
                        "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = :db"
                                + " AND TABLE_NAME = 'shop_message' ORDER BY 1")
                .bind("db", db).mapTo(String.class).list()), "the user's table was altered");
        assertEquals(List.of("shop_message"), fixture.admin().withHandle(handle -> handle.createQuery(
                        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = :db ORDER BY 1")
                .bind("db", db).mapTo(String.class).list()), "tables were created beside the user's");
    }

    /**
     * A first use dies between steps: Flyway made the first release's tables (V0_1, V0_2 of the
     * templates' location), CREATE ran step 0.3 (committed: DDL commits by itself) and waits for
     * step 0.4's metadata lock when its connection is killed. The tables are at 1.1, a level of
     * their own; a new first use reaches 1.2, and Flyway's migrate then runs V0_3 and V0_4 over it
     * and validates.
     */
    @Test
    void aFirstUseKilledBetweenStepsLeavesALevelThatCreateAndFlywayBothComplete() throws Exception {
        Migrations.flywayPrefixed(fixture.tablesDatabase(), "atk_").target("0.2").load().migrate();
        try (Handle reader = fixture.jdbi().open()) {
            reader.begin();
            reader.createQuery("SELECT COUNT(*) FROM " + tables().messageTable()).mapTo(Long.class).one();
            Future<MariaDbInbox> starting = threads.submit(() -> build(Duration.ofMinutes(5)));
            Long id = null;
            while (id == null) { // until the first use waits for the reader's metadata lock, in step 0.4
                id = fixture.admin().withHandle(handle -> handle.createQuery("SELECT ID FROM information_schema.PROCESSLIST"
                        + " WHERE STATE LIKE 'Waiting for table metadata lock' AND INFO LIKE 'ALTER TABLE atk_message%'")
                        .mapTo(Long.class).findOne().orElse(null));
                assertTrue(!starting.isDone(), "the first use ended before it waited");
            }
            long killed = id;
            fixture.admin().useHandle(handle -> handle.execute("KILL " + killed));
            assertThrows(ExecutionException.class, () -> starting.get(60, TimeUnit.SECONDS));
            reader.rollback();
        }
        assertEquals(List.of("inbox=1.1/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows());
        assertEquals(List.of(), resultColumns());

        MariaDbInbox inbox = build(Duration.ofSeconds(5));
        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-3", Content.of(3), tx -> 3));
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows());
        assertEquals(2, Migrations.flywayPrefixed(fixture.tablesDatabase(), "atk_").load().migrate().migrationsExecuted);
        Migrations.flywayPrefixed(fixture.tablesDatabase(), "atk_").load().validate();
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows());
        assertEquals(List.of("result", "result_type", "result_type_version"), resultColumns());
    }

    /**
     * The connection's own database holds tables named inbox_schema (saying version 9) and
     * inbox_message of other content; the inbox keeps the default names in another database. Nothing
     * of the inbox reads or writes the user's tables: first use, own and joined calls, find, purge.
     */
    @Test
    void tablesOfTheDefaultNamesInTheConnectionsDatabaseAreNeverTheInboxs() {
        String mine = fixture.database();
        fixture.admin().useHandle(handle -> {
            handle.execute("DROP VIEW IF EXISTS " + mine + ".inbox_message");
            handle.execute("CREATE TABLE " + mine + ".inbox_schema (component VARCHAR(64), version INT)");
            handle.execute("INSERT INTO " + mine + ".inbox_schema VALUES ('inbox', 9)");
            handle.execute("CREATE TABLE " + mine + ".inbox_message (inbox VARCHAR(64), id VARCHAR(64), note TEXT)");
            handle.execute("INSERT INTO " + mine + ".inbox_message VALUES ('warehouse', 'snack-1', 'the user''s')");
        });
        InboxTables tables = InboxTables.defaults().inSchema(fixture.tablesDatabase());
        MariaDbInbox inbox = MariaDbInbox.builder(fixture.jdbi()).name("warehouse").tables(tables).build();
        opened.add(inbox);
        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-1", Content.of(1), tx -> 1));
        Outcome<Integer> joined = fixture.jdbi().inTransaction(handle ->
                inbox.applyIn(handle, "snack-2", Content.of(2), tx -> 2));
        assertInstanceOf(Outcome.Applied.class, joined);
        assertTrue(inbox.find("snack-2").isPresent());
        try (MariaDbInbox validating = MariaDbInbox.builder(fixture.jdbi()).name("warehouse").tables(tables)
                .schema(dev.idempotent.inbox.SchemaMode.VALIDATE).build()) {
            assertTrue(validating.find("snack-1").isPresent());
        }
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"),
                MariaDbMigrationTest.schemaRows(fixture.admin(), tables.schemaTable()));
        fixture.admin().useHandle(handle -> {
            assertEquals(List.of("warehouse/snack-1/the user's"), handle.createQuery("SELECT CONCAT(inbox, '/', id, '/',"
                    + " note) FROM " + mine + ".inbox_message").mapTo(String.class).list());
            assertEquals(List.of("inbox=9"), handle.createQuery("SELECT CONCAT(component, '=', version) FROM "
                    + mine + ".inbox_schema").mapTo(String.class).list());
        });
    }

    /**
     * An instance of the first release (commit 356e67f) is creating the default tables in an empty
     * database: it holds the named lock that release keys by the database alone. An instance of
     * this release starting at the same moment on the same database must wait for it, not run its
     * steps beside it; with a short busy timeout it fails as busy, nothing created.
     */
    @Test
    void aFirstUseWaitsForTheFirstReleasesFirstUseOnTheSameDatabase() {
        String db = fixture.tablesDatabase();
        try (Handle released = fixture.admin().open()) {
            assertEquals(1, released.createQuery("SELECT GET_LOCK(CONCAT('inbox_schema_', MD5(:db)), 10)")
                    .bind("db", db).mapTo(Integer.class).one());
            InboxTables defaults = InboxTables.defaults().inSchema(db);
            assertThrows(InboxBusyException.class, () -> MariaDbInbox.builder(fixture.jdbi()).name("warehouse")
                    .tables(defaults).busyTimeout(Duration.ofMillis(500)).build());
            assertEquals(List.of(), fixture.admin().withHandle(handle -> handle.createQuery("SELECT TABLE_NAME FROM"
                    + " information_schema.TABLES WHERE TABLE_SCHEMA = :db").bind("db", db).mapTo(String.class).list()));
            released.createQuery("SELECT RELEASE_LOCK(CONCAT('inbox_schema_', MD5(:db)))").bind("db", db)
                    .mapTo(Integer.class).one();
            MariaDbInbox inbox = MariaDbInbox.builder(fixture.jdbi()).name("warehouse").tables(defaults).build();
            opened.add(inbox);
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 7));
        }
    }
}
