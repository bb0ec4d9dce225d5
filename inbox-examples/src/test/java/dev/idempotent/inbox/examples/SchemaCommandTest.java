package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.postgres.PostgresInbox;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code schema}: the DDL a DBA runs is the adapter's own scripts, every schema step of them, with
 * the default names or filled in with {@code --table-prefix}; and the inbox validates its result.
 */
class SchemaCommandTest {

    @TempDir
    Path dir;

    private static String resource(String path) throws IOException {
        try (InputStream in = SchemaCommandTest.class.getClassLoader().getResourceAsStream(path)) {
            assertTrue(in != null, path + " is on the class path");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** An adapter's Flyway migrations with the default names, every step in order: what a DBA runs by hand. */
    private static String migrations(String adapter) throws IOException {
        StringBuilder scripts = new StringBuilder();
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            scripts.append(resource("dev/idempotent/inbox/" + adapter + "/" + SchemaMigrations.DEFAULT_NAMES + step.file()));
        }
        return scripts.toString();
    }

    /** An adapter's templates, every step in order, with {@code prefix} written for the placeholder. */
    private static String templatesFilledIn(String adapter, String prefix) throws IOException {
        StringBuilder scripts = new StringBuilder();
        for (SchemaMigrations.Step step : SchemaMigrations.STEPS) {
            String template = resource("dev/idempotent/inbox/" + adapter + "/" + SchemaMigrations.TEMPLATES + step.file());
            assertTrue(template.contains("${inbox_table_prefix}"), step + " is a template");
            scripts.append(template.replace("${inbox_table_prefix}", prefix));
        }
        return scripts.toString();
    }

    private static final String[][] KINDS = {{"sqlite", "sqlite"}, {"postgresql", "postgres"}, {"mariadb", "mariadb"}};

    @Test
    void printsEachAdaptersOwnMigrationScripts() throws IOException {
        for (String[] kind : KINDS) {
            String script = migrations(kind[1]);

            CommandRun run = CommandRun.of("schema", "--print", "--db", kind[0]);

            assertEquals(0, run.exitCode(), run.err());
            assertTrue(run.out().startsWith("-- The inbox's migrations for "), run.out());
            assertEquals(script, run.out().substring(run.out().indexOf('\n') + 1), kind[0]);
            assertTrue(run.out().contains("result_type"), "the last step is printed too: " + kind[0]);
            assertEquals("", run.err());
        }
    }

    @Test
    void aTablePrefixPrintsTheTemplatesFilledInWithIt() throws IOException {
        for (String[] kind : KINDS) {
            CommandRun run = CommandRun.of("schema", "--db", kind[0], "--table-prefix", "orders_");

            assertEquals(0, run.exitCode(), run.err());
            String header = run.out().substring(0, run.out().indexOf('\n'));
            assertTrue(header.contains("table prefix orders_") && header.contains("flyway-prefixed/V0_1__"), header);
            String body = run.out().substring(run.out().indexOf('\n') + 1);
            assertEquals(templatesFilledIn(kind[1], "orders_"), body, kind[0]);
            assertFalse(body.contains("${"), "no placeholder left: " + kind[0]);
            assertTrue(body.contains("orders_message") && body.contains("orders_schema"), kind[0]);
            assertEquals("", run.err());
        }
    }

    @Test
    void thePrefixedSqliteDdlRunByHandPassesValidateForAnInboxOnThoseTables() {
        Path file = dir.resolve("prefixed.db");
        String ddl = CommandRun.of("schema", "--db", "sqlite", "--table-prefix", "orders_").out();
        Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> handle.createScript(ddl).execute());

        try (SqliteInbox inbox = SqliteInbox.builder(jdbi).tables(InboxTables.prefix("orders_"))
                .schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
        assertEquals(1, (int) jdbi.withHandle(handle -> handle.createQuery(
                "SELECT COUNT(*) FROM orders_message WHERE id = 'snack-7'").mapTo(Integer.class).one()));
        assertEquals(0, (int) jdbi.withHandle(handle -> handle.createQuery(
                "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'inbox%'").mapTo(Integer.class).one()),
                "no table of the default names");
    }

    @Test
    void thePrefixedPostgresDdlRunByHandPassesValidateForAnInboxOnThoseTables() {
        String ddl = CommandRun.of("schema", "--db", "postgresql", "--table-prefix", "orders_").out();
        try (PostgresSchema schema = PostgresSchema.create("schema_command")) {
            schema.jdbi().useHandle(handle -> handle.createScript(ddl).execute());

            try (PostgresInbox inbox = PostgresInbox.builder(schema.jdbi()).tables(InboxTables.prefix("orders_"))
                    .schema(SchemaMode.VALIDATE).build()) {
                assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            }
            assertEquals(1, (int) schema.jdbi().withHandle(handle -> handle.createQuery(
                    "SELECT COUNT(*) FROM orders_message WHERE id = 'snack-7'").mapTo(Integer.class).one()));
        }
    }

    @Test
    void aTablePrefixThatIsNoPlainIdentifierIsOneLineNamingTheOption() {
        for (String prefix : new String[] {"Orders_", "orders-", "1st_", "a;b", "a b", "x'", "o".repeat(33)}) {
            CommandRun run = CommandRun.of("schema", "--db", "sqlite", "--table-prefix", prefix)
                    .assertRefused(ExitCodes.USAGE, "schema", "--table-prefix");
            assertTrue(run.err().contains(prefix.length() > 32 ? "at most 32" : "lower-case letters a-z, digits and"
                    + " underscores"), run.err());
            assertEquals("", run.out(), "no DDL printed for " + prefix);
        }
    }

    @Test
    void aDatabaseAsServeTakesItNamesTheKindAndIsNotOpened() {
        Path file = dir.resolve("warehouse.db");
        assertTrue(CommandRun.of("schema", "--print", "--db", file.toString()).out().contains("WITHOUT ROWID"));
        assertFalse(Files.exists(file), "nothing is opened or created");
        assertTrue(CommandRun.of("schema", "--print", "--db", "postgresql://127.0.0.1:1/none?user=nobody").out()
                .contains("TIMESTAMPTZ"));
        assertTrue(CommandRun.of("schema", "--print", "--db", "jdbc:mariadb://nobody@127.0.0.1:1/none").out()
                .contains("ENGINE = InnoDB"));
    }

    @Test
    void thePrintedSqliteDdlRunByHandPassesValidate() {
        Path file = dir.resolve("by-hand.db");
        String ddl = CommandRun.of("schema", "--print", "--db", "sqlite").out();
        Jdbi jdbi = SqliteInbox.jdbi(file);
        jdbi.useHandle(handle -> handle.createScript(ddl).execute());

        try (SqliteInbox inbox = SqliteInbox.builder(jdbi).schema(SchemaMode.VALIDATE).build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
        }
    }

    @Test
    void thePrintedPostgresDdlRunByHandPassesValidate() {
        String ddl = CommandRun.of("schema", "--print", "--db", "postgresql").out();
        try (PostgresSchema schema = PostgresSchema.create("schema_command")) {
            schema.jdbi().useHandle(handle -> handle.createScript(ddl).execute());

            try (PostgresInbox inbox = PostgresInbox.builder(schema.jdbi()).schema(SchemaMode.VALIDATE).build()) {
                assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), tx -> 1));
            }
        }
    }

    @Test
    void printingIsTheDefault() throws IOException {
        CommandRun run = CommandRun.of("schema", "--db", "sqlite");

        assertEquals(0, run.exitCode(), run.err());
        assertEquals(migrations("sqlite"),
                run.out().substring(run.out().indexOf('\n') + 1));
    }

    @Test
    void aBareWordThatIsNoKindIsRefusedNotTakenForAFile() {
        for (String word : new String[] {"mysql", "pg", "maria", "oracle"}) {
            CommandRun run = CommandRun.of("schema", "--print", "--db", word)
                    .assertRefused(ExitCodes.USAGE, "schema", "--db " + word);
            assertTrue(run.err().contains("sqlite, postgresql or mariadb"), run.err());
            assertTrue(run.err().contains("jdbc:sqlite:FILE"), run.err());
            assertEquals("", run.out(), "no DDL printed for " + word);
        }
    }

    @Test
    void aSqliteFileIsAPathWithASlashOrADbSuffixOrAJdbcUrl() {
        for (String db : new String[] {"warehouse.db", "./warehouse", "jdbc:sqlite:warehouse.db", "data/w.sqlite"}) {
            CommandRun run = CommandRun.of("schema", "--db", db);
            assertEquals(0, run.exitCode(), db + ": " + run.err());
            assertTrue(run.out().contains("WITHOUT ROWID"), db);
        }
    }

    @Test
    void mistakesAreOneLineAndExitTwo() {
        CommandRun.of("schema").assertRefused(ExitCodes.USAGE, "schema", "--db");
        CommandRun.of("schema", "--print").assertRefused(ExitCodes.USAGE, "schema", "--db");
        CommandRun.of("schema", "--print", "--db", "oracle://db.example/x").assertRefused(ExitCodes.USAGE, "schema", "--db");
    }
}
