package dev.idempotent.inbox.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.JdbiResultInbox;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Attacks on table names and schema steps on PostgreSQL: tables of the default names with other
 * content where the connection's search_path points, concurrent first uses upgrading the first
 * release's tables on a pool, and the first release's statements on tables this release upgraded.
 */
class PostgresSchemaAttackTest {

    private final PostgresFixture fixture = PostgresFixture.withDefaultNames();
    private final String other = fixture.schema() + "_other";
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    PostgresSchemaAttackTest() {
        fixture.admin().useHandle(handle -> handle.execute("CREATE SCHEMA " + other));
    }

    @AfterEach
    void close() throws Exception {
        threads.shutdownNow();
        for (AutoCloseable closeable : opened) {
            closeable.close();
        }
        fixture.admin().useHandle(handle -> handle.execute("DROP SCHEMA " + other + " CASCADE"));
        fixture.close();
    }

    private void stepsApplied(String schema, InboxTables tables, int steps) {
        fixture.admin().useHandle(handle -> {
            handle.begin();
            handle.execute("SET LOCAL search_path TO " + schema);
            for (SchemaMigrations.Step step : SchemaMigrations.STEPS.subList(0, steps)) {
                handle.createScript(SchemaMigrations.script(PostgresStore.class, step, tables)).execute();
            }
            handle.commit();
        });
    }

    private List<String> schemaRows(String table) {
        return fixture.admin().withHandle(handle -> handle.createQuery("SELECT component || '=' || version || '.'"
                + " || revision || '/' || coalesce(min_release, '-') FROM " + table + " ORDER BY component")
                .mapTo(String.class).list());
    }

    /**
     * The user keeps tables named inbox_schema, inbox_message and inbox_horizon of their own in the
     * schema the connections' search_path names (inbox_schema even says version 9); the inbox keeps
     * the default names in another schema. Nothing of the inbox reads or writes the user's tables:
     * first use, own and joined calls with results, find, purge and the horizon.
     */
    @Test
    void tablesOfTheDefaultNamesWhereTheSearchPathPointsAreNeverTheInboxs() {
        fixture.admin().useHandle(handle -> {
            String mine = fixture.schema();
            handle.execute("CREATE TABLE " + mine + ".inbox_schema (component TEXT, version INTEGER)");
            handle.execute("INSERT INTO " + mine + ".inbox_schema VALUES ('inbox', 9)");
            handle.execute("CREATE TABLE " + mine + ".inbox_message (inbox TEXT, id TEXT, note TEXT)");
            handle.execute("INSERT INTO " + mine + ".inbox_message VALUES ('warehouse', 'snack-1', 'the user''s')");
            handle.execute("CREATE TABLE " + mine + ".inbox_horizon (inbox TEXT, horizon TEXT)");
        });
        InboxTables tables = InboxTables.defaults().inSchema(other);
        Instant[] now = {Instant.parse("2026-01-05T10:00:00Z")};
        PostgresInbox inbox = PostgresInbox.builder(fixture.jdbi()).name("warehouse").tables(tables)
                .clock(new java.time.Clock() {
                    @Override
                    public java.time.ZoneId getZone() {
                        return java.time.ZoneOffset.UTC;
                    }

                    @Override
                    public java.time.Clock withZone(java.time.ZoneId zone) {
                        return this;
                    }

                    @Override
                    public Instant instant() {
                        return now[0];
                    }
                })
                .retention(Duration.ofDays(1)).build();
        opened.add(inbox);
        JdbiResultInbox<byte[]> results = inbox.storingResults(ResultCodec.bytes("test.bytes", 1));

        assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-1", Content.of(1), tx -> 1));
        Outcome<byte[]> joined = fixture.jdbi().inTransaction(handle ->
                results.applyIn(handle, "snack-2", Content.of(2), tx -> new byte[] {4, 2}));
        assertInstanceOf(Outcome.Applied.class, joined);
        Outcome<byte[]> again = fixture.jdbi().inTransaction(handle ->
                results.applyIn(handle, "snack-2", Content.of(2), tx -> new byte[] {9}));
        assertArrayEquals(new byte[] {4, 2}, (byte[]) assertInstanceOf(Outcome.Duplicate.class, again).result().value());
        assertTrue(inbox.find("snack-1").isPresent());

        now[0] = now[0].plus(Duration.ofDays(3));
        assertEquals(2, inbox.retention().purge().rowsPurged());
        assertTrue(inbox.find("snack-2").isEmpty());

        try (PostgresInbox validating = PostgresInbox.builder(fixture.jdbi()).name("warehouse").tables(tables)
                .schema(SchemaMode.VALIDATE).build()) {
            assertTrue(validating.find("snack-1").isEmpty());
        }
        // Group commit on the same tables, from several threads at once.
        try (PostgresInbox grouped = PostgresInbox.builder(fixture.jdbi()).name("warehouse").tables(tables)
                .commitMode(dev.idempotent.inbox.CommitMode.GROUP).build()) {
            List<Future<Outcome<Integer>>> calls = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                int n = i % 8;
                calls.add(threads.submit(() -> grouped.apply("group-" + n, Content.of(n), tx -> n)));
            }
            int applied = 0;
            for (Future<Outcome<Integer>> call : calls) {
                applied += call.get(60, TimeUnit.SECONDS) instanceof Outcome.Applied ? 1 : 0;
            }
            assertEquals(8, applied, "each id applied once");
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        assertEquals(8, fixture.admin().withHandle(handle -> handle.createQuery("SELECT count(*) FROM "
                + tables.messageTable() + " WHERE id LIKE 'group-%'").mapTo(Integer.class).one()).intValue());
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows(other + ".inbox_schema"));
        fixture.admin().useHandle(handle -> {
            assertEquals(List.of("warehouse/snack-1/the user's"), handle.createQuery("SELECT inbox || '/' || id || '/'"
                    + " || note FROM " + fixture.schema() + ".inbox_message").mapTo(String.class).list());
            assertEquals(List.of("inbox=9"), handle.createQuery("SELECT component || '=' || version FROM "
                    + fixture.schema() + ".inbox_schema").mapTo(String.class).list());
            assertEquals(0, handle.createQuery("SELECT count(*) FROM " + fixture.schema() + ".inbox_horizon")
                    .mapTo(Integer.class).one());
        });
    }

    /** Four instances on one pool starting at once on the first release's tables all end on 1.2. */
    @Test
    void concurrentFirstUsesOnAPoolUpgradeTheFirstReleasesTablesOnce() throws Exception {
        InboxTables tables = InboxTables.prefix("orders_").inSchema(other);
        stepsApplied(other, tables, 2);
        fixture.admin().useHandle(handle -> handle.execute("INSERT INTO " + tables.messageTable() + " ("
                + InboxRows.COLUMNS + ") VALUES ('warehouse', 'before', 1, 'inbox.int64', 1, ?, NULL, now())",
                new byte[32]));
        HikariConfig config = new HikariConfig();
        config.setDataSource(PostgresFixture.dataSource(PostgresFixture.PORT, "-c search_path=" + fixture.schema()));
        config.setMaximumPoolSize(6);
        HikariDataSource pool = new HikariDataSource(config);
        opened.add(pool);
        Jdbi jdbi = Jdbi.create(pool);
        int instances = 4;
        CyclicBarrier start = new CyclicBarrier(instances);
        List<Future<PostgresInbox>> starting = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            starting.add(threads.submit(() -> {
                start.await();
                PostgresInbox inbox = PostgresInbox.builder(jdbi).name("warehouse").tables(tables)
                        .busyTimeout(Duration.ofSeconds(30)).build();
                synchronized (opened) {
                    opened.add(inbox);
                }
                return inbox;
            }));
        }
        for (Future<PostgresInbox> instance : starting) {
            assertTrue(instance.get(120, TimeUnit.SECONDS).find("before").isPresent());
        }
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows(tables.schemaTable()));
        assertInstanceOf(Outcome.Applied.class, starting.get(0).get().apply("snack-3", Content.of(3), tx -> 3));
        assertInstanceOf(Outcome.Duplicate.class, starting.get(3).get().apply("snack-3", Content.of(3), tx -> 3));
        assertEquals(List.of(), fixture.admin().withHandle(handle -> handle.createQuery("SELECT table_name FROM"
                + " information_schema.tables WHERE table_schema = :s").bind("s", fixture.schema())
                .mapTo(String.class).list()), "nothing where the search_path points");
    }

    /**
     * The first release's statements (commit 356e67f: its claim, its read-back, its schema script at
     * start) keep working on tables this release upgraded while this release stores results, and
     * its start changes no level.
     */
    @Test
    void theFirstReleasesStatementsWorkOnUpgradedTablesBesideStoredResults() {
        PostgresInbox inbox = PostgresInbox.builder(fixture.jdbi()).name("warehouse").build();
        opened.add(inbox);
        JdbiResultInbox<byte[]> results = inbox.storingResults(ResultCodec.bytes("test.bytes", 1));
        assertInstanceOf(Outcome.Applied.class, results.apply("snack-4", Content.of(4), tx -> new byte[] {4}));

        String releasedClaim = "INSERT INTO inbox_message (" + InboxRows.COLUMNS + ") VALUES ("
                + InboxRows.PLACEHOLDERS + ") ON CONFLICT (inbox, id) DO NOTHING";
        String releasedRead = "SELECT " + InboxRows.COLUMNS + " FROM inbox_message WHERE inbox = ? AND id = ?";
        String releasedScript = new String(readReleased("V0_1__inbox_schema.sql"), java.nio.charset.StandardCharsets.UTF_8);
        fixture.jdbi().useHandle(handle -> {
            handle.begin();
            handle.createScript(releasedScript).execute();
            // The fingerprint of Content.of(4), as this release wrote it for snack-4.
            byte[] fingerprint = handle.createQuery("SELECT fingerprint FROM inbox_message WHERE id = 'snack-4'")
                    .mapTo(byte[].class).one();
            int claimed = handle.createUpdate(releasedClaim)
                    .bind(0, "warehouse").bind(1, "snack-5").bind(2, 1).bind(3, "inbox.int64").bind(4, 1)
                    .bind(5, fingerprint).bind(6, (byte[]) null).bind(7, java.time.OffsetDateTime.now())
                    .execute();
            assertEquals(1, claimed);
            assertEquals(0, handle.createUpdate(releasedClaim).bind(0, "warehouse").bind(1, "snack-4").bind(2, 1)
                    .bind(3, "inbox.int64").bind(4, 1).bind(5, new byte[32]).bind(6, (byte[]) null)
                    .bind(7, java.time.OffsetDateTime.now()).execute(), "the released claim sees the stored id");
            assertEquals("inbox.int64", handle.createQuery(releasedRead).bind(0, "warehouse").bind(1, "snack-4")
                    .mapToMap().one().get("content_type"));
            handle.commit();
        });
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows(fixture.schema() + ".inbox_schema"));
        assertArrayEquals(new byte[] {4}, (byte[]) assertInstanceOf(Outcome.Duplicate.class,
                results.apply("snack-4", Content.of(4), tx -> new byte[] {9})).result().value());
        assertInstanceOf(Outcome.Duplicate.class, inbox.apply("snack-5", Content.of(4), tx -> 1),
                "a row of the released claim, without a result, is a duplicate to this release");
    }

    private static byte[] readReleased(String file) {
        try (var in = PostgresStore.class.getResourceAsStream("flyway/" + file)) {
            return in.readAllBytes();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * The user's own table of messages happens to have the name prefix {@code shop_} gives the
     * inbox's table of records, and columns inbox, id and received_at. Without {@code shop_schema}
     * it is not the inbox's: the first use must refuse it before any DDL, rather than skip creating
     * it, index it and add the result columns to it.
     */
    @Test
    void aUsersOwnTableOfTheNameOfTheInboxsTableIsRefusedWithNothingCreatedOrAltered() {
        fixture.admin().useHandle(handle -> handle.execute("CREATE TABLE " + other + ".shop_message"
                + " (inbox TEXT, id TEXT, received_at TIMESTAMPTZ, note TEXT)"));
        InboxTables shop = InboxTables.prefix("shop_").inSchema(other);

        dev.idempotent.inbox.InboxStorageException refused = org.junit.jupiter.api.Assertions.assertThrows(
                dev.idempotent.inbox.InboxStorageException.class,
                () -> PostgresInbox.builder(fixture.jdbi()).name("warehouse").tables(shop).build());
        assertTrue(refused.getMessage().contains("shop_message"), refused.getMessage());
        fixture.admin().useHandle(handle -> {
            assertEquals(List.of("id", "inbox", "note", "received_at"), handle.createQuery("SELECT column_name"
                    + " FROM information_schema.columns WHERE table_schema = :s AND table_name = 'shop_message'"
                    + " ORDER BY 1").bind("s", other).mapTo(String.class).list(), "the user's table was altered");
            assertEquals(List.of("shop_message"), handle.createQuery("SELECT relname FROM pg_catalog.pg_class c JOIN"
                    + " pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE nspname = :s AND relkind IN ('r', 'i')"
                    + " ORDER BY 1").bind("s", other).mapTo(String.class).list(), "tables or indexes were created");
        });
    }

    /**
     * A first use dies between steps: Flyway made the first release's tables (V0_1, V0_2 of the
     * templates' location), CREATE ran step 0.3 and waits for step 0.4's lock on the table of
     * records when its backend is terminated. Nothing of 0.3 stays (one transaction); a new first
     * use reaches 1.2, and Flyway's migrate then runs V0_3 and V0_4 over it and validates.
     */
    @Test
    void aFirstUseKilledBetweenStepsLeavesTheTablesAsTheyWereAndEverythingReachesTheKnownLevel() throws Exception {
        InboxTables tables = InboxTables.prefix("crash_").inSchema(other);
        Migrations.configurePrefixed(other, "crash_").target(Migrations.RELEASED_VERSION).load().migrate();
        try (Handle reader = fixture.admin().open()) {
            reader.begin();
            reader.createQuery("SELECT count(*) FROM " + tables.messageTable()).mapTo(Long.class).one();
            Future<PostgresInbox> starting = threads.submit(() -> PostgresInbox.builder(fixture.jdbi()).name("warehouse")
                    .tables(tables).busyTimeout(Duration.ofMinutes(5)).build());
            Integer pid = null;
            while (pid == null) { // until the first use waits for the reader's lock, in step 0.4
                pid = fixture.admin().withHandle(handle -> handle.createQuery("SELECT pid FROM pg_stat_activity"
                        + " WHERE wait_event_type = 'Lock' AND query LIKE '%ALTER TABLE crash_message%'")
                        .mapTo(Integer.class).findOne().orElse(null));
                assertTrue(!starting.isDone(), "the first use ended before it waited");
            }
            int killed = pid;
            boolean terminated = fixture.admin().withHandle(handle -> handle.createQuery(
                    "SELECT pg_terminate_backend(:pid)").bind("pid", killed).mapTo(Boolean.class).one());
            assertTrue(terminated);
            org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> starting.get(60, TimeUnit.SECONDS));
            reader.rollback();
        }
        assertEquals(List.of("inbox=1", "kafka_offset=1"), fixture.admin().withHandle(handle -> handle.createQuery(
                "SELECT component || '=' || version FROM " + tables.schemaTable() + " ORDER BY 1").mapTo(String.class)
                .list()));
        int stepColumns = fixture.admin().withHandle(handle -> handle.createQuery("SELECT count(*) FROM"
                + " information_schema.columns WHERE table_schema = :s AND column_name IN ('revision', 'result')")
                .bind("s", other).mapTo(Integer.class).one());
        assertEquals(0, stepColumns, "a step of the killed first use stayed");

        PostgresInbox inbox = PostgresInbox.builder(fixture.jdbi()).name("warehouse").tables(tables).build();
        opened.add(inbox);
        assertInstanceOf(Outcome.Applied.class, inbox.storingResults(ResultCodec.bytes("test.bytes", 1))
                .apply("snack-6", Content.of(6), tx -> new byte[] {6}));
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows(tables.schemaTable()));
        assertEquals(2, Migrations.configurePrefixed(other, "crash_").load().migrate().migrationsExecuted);
        Migrations.configurePrefixed(other, "crash_").load().validate();
        assertEquals(List.of("inbox=1.2/0.1.0", "kafka_offset=1.0/0.1.0"), schemaRows(tables.schemaTable()));
        try (PostgresInbox validating = PostgresInbox.builder(fixture.jdbi()).name("warehouse").tables(tables)
                .schema(SchemaMode.VALIDATE).build()) {
            assertTrue(validating.find("snack-6").isPresent());
        }
    }

    /**
     * Prefixes chosen to make one inbox's names run into another's: {@code inbox_} and
     * {@code inbox_message_} (whose tables start with {@code inbox_message}), and a prefix of the
     * longest length, whose longest derived name PostgreSQL would truncate past 63 bytes. All in one
     * schema: each has its own tables, indexes and keys, whole, and its own records.
     */
    @Test
    void prefixesThatRunIntoEachOthersNamesKeepTheirOwnTablesInOneSchema() {
        String longest = "p".repeat(InboxTables.MAX_PREFIX_BYTES - 1) + "_";
        List<String> prefixes = List.of("inbox_", "inbox_message_", longest);
        List<PostgresInbox> inboxes = new ArrayList<>();
        for (String prefix : prefixes) {
            PostgresInbox inbox = PostgresInbox.builder(fixture.jdbi()).name("warehouse")
                    .tables(InboxTables.prefix(prefix).inSchema(other)).build();
            opened.add(inbox);
            inboxes.add(inbox);
        }
        for (int i = 0; i < inboxes.size(); i++) {
            assertInstanceOf(Outcome.Applied.class, inboxes.get(i).apply("snack", Content.of(i), tx -> 1));
        }
        for (int i = 0; i < inboxes.size(); i++) {
            assertInstanceOf(Outcome.Duplicate.class, inboxes.get(i).apply("snack", Content.of(i), tx -> 1),
                    "inbox " + prefixes.get(i) + " sees its own record");
        }
        List<String> names = fixture.admin().withHandle(handle -> handle.createQuery("SELECT relname FROM"
                + " pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE nspname = :s"
                + " AND relkind IN ('r', 'i') ORDER BY 1").bind("s", other).mapTo(String.class).list());
        for (String prefix : prefixes) {
            for (String suffix : List.of("schema", "schema_pkey", "message", "message_pkey", "message_received",
                    "horizon", "horizon_pkey", "kafka_offset", "kafka_offset_pkey")) {
                assertTrue(names.contains(prefix + suffix), prefix + suffix + " missing: " + names);
            }
        }
        assertEquals(prefixes.size() * 9, names.size(), names.toString());
        for (String prefix : prefixes) {
            assertEquals(1, fixture.admin().withHandle(handle -> handle.createQuery("SELECT count(*) FROM " + other
                    + "." + prefix + "message").mapTo(Integer.class).one()).intValue());
        }
    }

    /**
     * An instance of the first release (commit 356e67f) is creating the default tables in an empty
     * schema: it holds the first-use lock that release keys by the schema's name alone. An instance
     * of this release starting at the same moment on the same schema must wait for it, not run its
     * own CREATE TABLE IF NOT EXISTS beside it; with a short busy timeout it fails as busy, nothing
     * created.
     */
    @Test
    void aFirstUseWaitsForTheFirstReleasesFirstUseOnTheSameSchema() {
        try (Handle released = fixture.admin().open()) {
            released.begin();
            released.createQuery("SELECT pg_advisory_xact_lock(" + 0x1b0c5e1 + ", hashtext(:schema))")
                    .bind("schema", other).mapTo(String.class).one();
            Jdbi onOther = Jdbi.create(PostgresFixture.dataSource(PostgresFixture.PORT, "-c search_path=" + other));
            org.junit.jupiter.api.Assertions.assertThrows(dev.idempotent.inbox.InboxBusyException.class,
                    () -> PostgresInbox.builder(onOther).name("warehouse").busyTimeout(Duration.ofMillis(500)).build());
            assertEquals(List.of(), fixture.admin().withHandle(handle -> handle.createQuery("SELECT table_name FROM"
                    + " information_schema.tables WHERE table_schema = :s").bind("s", other).mapTo(String.class).list()));
            released.rollback();
            PostgresInbox inbox = PostgresInbox.builder(onOther).name("warehouse").build();
            opened.add(inbox);
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 7));
        }
    }
}
