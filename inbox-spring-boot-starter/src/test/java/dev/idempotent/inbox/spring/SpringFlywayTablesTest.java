package dev.idempotent.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.spi.jdbc.SchemaMigrations;
import dev.idempotent.inbox.spring.actuate.InboxActuatorAutoConfiguration;
import dev.idempotent.inbox.spring.actuate.InboxHealthIndicator;
import java.nio.file.Path;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Spring Boot's own Flyway on the inbox's {@code flyway-prefixed} templates with the
 * {@code inbox_table_prefix} placeholder, beside {@code inbox.tables.*}, on real SQLite and
 * PostgreSQL. Under {@code create} as under {@code validate} Flyway runs first and runs every step
 * (its history has each of them), so the inbox finds its tables at the level it knows and runs no
 * DDL: had the inbox created or upgraded them first, Flyway's migration would fail on the tables it
 * found, and the context would not start.
 */
class SpringFlywayTablesTest {

    @TempDir
    Path dir;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, FlywayAutoConfiguration.class,
                    InboxAutoConfiguration.class, InboxActuatorAutoConfiguration.class))
            .withPropertyValues("spring.flyway.placeholders.inbox_table_prefix=orders_", "inbox.tables.prefix=orders_");

    @ParameterizedTest
    @ValueSource(strings = {"create", "validate"})
    void onSqliteFlywayMigratesThePrefixedTablesBeforeTheInboxChecksThem(String mode) {
        runner.withPropertyValues("spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
                "spring.flyway.locations=classpath:dev/idempotent/inbox/sqlite/flyway-prefixed",
                "inbox.schema=" + mode).run(context -> {
            assertWorksOnTheMigratedTables(context, null, InboxTables.prefix("orders_"));
            List<String> tables = new JdbcTemplate(context.getBean(DataSource.class)).queryForList(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'inbox%'", String.class);
            assertEquals(List.of(), tables, "no table of the default names");
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"create", "validate"})
    void onPostgresFlywayMigratesThePrefixedTablesInTheirSchemaBeforeTheInboxChecksThem(String mode) {
        try (PostgresSchema app = new PostgresSchema(); PostgresSchema inboxes = new PostgresSchema()) {
            runner.withPropertyValues("spring.datasource.url=" + app.url(),
                    "spring.datasource.username=" + PostgresSchema.USER,
                    "spring.flyway.default-schema=" + inboxes.name, "spring.flyway.schemas=" + inboxes.name,
                    "spring.flyway.locations=classpath:dev/idempotent/inbox/postgres/flyway-prefixed",
                    "inbox.tables.schema=" + inboxes.name, "inbox.schema=" + mode).run(context -> {
                assertWorksOnTheMigratedTables(context, inboxes.name, InboxTables.prefix("orders_").inSchema(inboxes.name));
                Integer inAppSchema = new JdbcTemplate(context.getBean(DataSource.class)).queryForObject(
                        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ?", Integer.class, app.name);
                assertEquals(0, inAppSchema, "nothing in the connection's own schema");
            });
        }
    }

    private static void assertWorksOnTheMigratedTables(AssertableApplicationContext context, String schema,
            InboxTables tables) {
        assertThat(context).hasNotFailed();
        JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
        String history = schema == null ? "flyway_schema_history" : schema + ".flyway_schema_history";
        List<String> migrated = jdbc.queryForList(
                "SELECT version FROM " + history + " WHERE success ORDER BY installed_rank", String.class);
        assertEquals(SchemaMigrations.STEPS.stream().map(SchemaMigrations.Step::migration).toList(), migrated,
                "Flyway ran every step itself");

        JdbiInbox inbox = context.getBean(JdbiInbox.class);
        assertEquals(tables, inbox.settings().tables());
        SpringResultInbox<String> results = context.getBean(SpringInbox.class).storingResults(SpringResultInboxTest.TEXT);
        assertInstanceOf(Outcome.Applied.class, results.apply("f-1", Content.of(1), tx -> "answer"));
        assertEquals("answer", assertInstanceOf(Outcome.Duplicate.class,
                results.apply("f-1", Content.of(1), tx -> "again")).result().value());
        assertEquals(1, jdbc.queryForObject("SELECT COUNT(*) FROM " + tables.messageTable(), Integer.class));

        Health health = context.getBean(InboxHealthIndicator.class).health(true);
        assertEquals(Status.UP, health.getStatus(), health::toString);
        assertEquals(tables.describe(), health.getDetails().get("tables"));
        assertEquals(SchemaMigrations.known(SchemaMigrations.INBOX).toString(), health.getDetails().get("schemaLevel"));
    }
}
