package dev.idempotent.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import dev.idempotent.inbox.micrometer.InboxMetrics;
import dev.idempotent.inbox.spring.metrics.InboxMetricsAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import dev.idempotent.inbox.postgres.PostgresInbox;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import dev.idempotent.inbox.spring.actuate.InboxActuatorAutoConfiguration;
import dev.idempotent.inbox.spring.actuate.InboxEndpoint;
import dev.idempotent.inbox.spring.actuate.InboxHealthIndicator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

class InboxAutoConfigurationTest {

    @TempDir
    Path dir;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, InboxAutoConfiguration.class,
                    InboxActuatorAutoConfiguration.class));

    private ApplicationContextRunner sqlite() {
        return runner.withPropertyValues("spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"));
    }

    @Test
    void sqliteDataSourceGetsASqliteInboxAndASpringInboxOverIt() {
        sqlite().withPropertyValues("inbox.name=receipts", "inbox.busy-timeout=2s", "inbox.retention=7d").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(Inbox.class).hasSingleBean(SpringInbox.class);
            SqliteInbox inbox = context.getBean(SqliteInbox.class);
            assertEquals("receipts", inbox.name());
            assertEquals(Duration.ofSeconds(2), inbox.settings().busyTimeout());
            assertEquals(Duration.ofDays(7), inbox.settings().retention());
            assertEquals(CommitMode.GROUP, inbox.settings().commitMode());
            assertSame(inbox, context.getBean(SpringInbox.class).inbox());
            // The schema was created (SQLite's default), so the inbox works at once.
            Outcome<Void> outcome = context.getBean(SpringInbox.class).apply("a-1", Content.of(1), tx -> { });
            assertInstanceOf(Outcome.Applied.class, outcome);
            assertEquals(1, inbox.stats().applied());
        });
    }

    @Test
    void postgresDataSourceGetsAPostgresInbox() {
        try (PostgresSchema schema = new PostgresSchema()) {
            runner.withPropertyValues("spring.datasource.url=" + schema.url(), "spring.datasource.username=" + PostgresSchema.USER,
                    "inbox.schema=create", "inbox.commit-mode=group").run(context -> {
                assertThat(context).hasNotFailed().hasSingleBean(PostgresInbox.class).hasSingleBean(SpringInbox.class);
                PostgresInbox inbox = context.getBean(PostgresInbox.class);
                assertEquals(CommitMode.GROUP, inbox.settings().commitMode());
                assertInstanceOf(Outcome.Applied.class, inbox.apply("p-1", Content.of(1), tx -> { }));
            });
        }
    }

    @Test
    void mariaDbDataSourceGetsAMariaDbInbox() throws Exception {
        String database = "inbox_boot_" + java.util.UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        mariaDb("CREATE DATABASE " + database);
        try {
            runner.withPropertyValues("spring.datasource.url=" + MARIADB_SERVER + database + "?useAffectedRows=true",
                    "spring.datasource.username=" + MARIADB_USER, "inbox.schema=create").run(context -> {
                assertThat(context).hasNotFailed().hasSingleBean(MariaDbInbox.class).hasSingleBean(SpringInbox.class);
                assertInstanceOf(Outcome.Applied.class,
                        context.getBean(SpringInbox.class).apply("m-1", Content.of(1), tx -> { }));
            });
        } finally {
            mariaDb("DROP DATABASE IF EXISTS " + database);
        }
    }

    /** The MariaDB test server: 127.0.0.1:3306, user {@code root}, or what the environment says. */
    private static final String MARIADB_SERVER = "jdbc:mariadb://" + PostgresSchema.environment("INBOX_MARIADB_HOST", "127.0.0.1")
            + ":" + PostgresSchema.environment("INBOX_MARIADB_PORT", "3306") + "/";
    private static final String MARIADB_USER = PostgresSchema.environment("INBOX_MARIADB_USER", "root");

    private static void mariaDb(String sql) throws java.sql.SQLException {
        try (java.sql.Connection connection = java.sql.DriverManager.getConnection(
                MARIADB_SERVER + "test", MARIADB_USER, "");
                java.sql.Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    @Test
    void onMariaDbTheTablesSchemaIsADatabaseAndHealthReadsTheLevelThere() throws Exception {
        String suffix = java.util.UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String app = "inbox_boot_" + suffix;
        String tables = "inbox_boot_t_" + suffix;
        mariaDb("CREATE DATABASE " + app);
        mariaDb("CREATE DATABASE " + tables);
        try {
            runner.withPropertyValues("spring.datasource.url=" + MARIADB_SERVER + app + "?useAffectedRows=true",
                    "spring.datasource.username=" + MARIADB_USER, "inbox.schema=create",
                    "inbox.tables.prefix=ibx_", "inbox.tables.schema=" + tables).run(context -> {
                assertThat(context).hasNotFailed().hasSingleBean(MariaDbInbox.class);
                assertInstanceOf(Outcome.Applied.class,
                        context.getBean(SpringInbox.class).apply("m-1", Content.of(1), tx -> { }));
                Health health = context.getBean(InboxHealthIndicator.class).health(true);
                assertEquals(Status.UP, health.getStatus(), health::toString);
                assertEquals("tables ibx_* in schema " + tables, health.getDetails().get("tables"));
                assertEquals(dev.idempotent.inbox.spi.jdbc.SchemaMigrations.known("inbox").toString(),
                        health.getDetails().get("schemaLevel"));
            });
        } finally {
            mariaDb("DROP DATABASE IF EXISTS " + app);
            mariaDb("DROP DATABASE IF EXISTS " + tables);
        }
    }

    @Test
    void validateIsPostgresDefaultAndFailsStartUpOnAMissingSchema() {
        try (PostgresSchema schema = new PostgresSchema()) {
            ApplicationContextRunner postgres = runner.withPropertyValues("spring.datasource.url=" + schema.url(),
                    "spring.datasource.username=" + PostgresSchema.USER);
            postgres.run(context -> {
                assertThat(context).hasFailed();
                String messages = messages(context.getStartupFailure());
                assertTrue(messages.contains("SCHEMA_MISSING") || messages.contains("inbox_schema"), messages);
            });
            postgres.withPropertyValues("inbox.schema=create").run(context -> assertThat(context).hasNotFailed());
            // Once the tables are there (a migration tool's, or here the inbox's own), validate starts.
            postgres.run(context -> assertThat(context).hasNotFailed().hasSingleBean(PostgresInbox.class));
        }
    }

    @Test
    void validateStartsOnASchemaSpringBootsFlywayMigratedWithTheInboxsMigration() {
        try (PostgresSchema schema = new PostgresSchema()) {
            runner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
                    .withPropertyValues("spring.datasource.url=" + schema.url(),
                            "spring.datasource.username=" + PostgresSchema.USER,
                            "spring.flyway.schemas=" + schema.name,
                            "spring.flyway.locations=classpath:dev/idempotent/inbox/postgres/flyway")
                    .run(context -> {
                        assertThat(context).hasNotFailed().hasSingleBean(PostgresInbox.class);
                        assertInstanceOf(Outcome.Applied.class,
                                context.getBean(SpringInbox.class).apply("f-1", Content.of(1), tx -> { }));
                    });
        }
    }

    @Test
    void validateOnSqliteFailsOnAFileWithoutTheTables() {
        sqlite().withPropertyValues("inbox.schema=validate").run(context -> {
            assertThat(context).hasFailed();
            String messages = messages(context.getStartupFailure());
            assertTrue(messages.contains("SCHEMA_MISSING") || messages.contains("inbox_schema"), messages);
        });
    }

    @Test
    void noneCreatesAndChecksNothingAndTheHealthSaysTheSchemaIsMissing() {
        try (PostgresSchema schema = new PostgresSchema()) {
            runner.withPropertyValues("spring.datasource.url=" + schema.url(), "spring.datasource.username=" + PostgresSchema.USER,
                    "inbox.schema=none").run(context -> {
                assertThat(context).hasNotFailed().hasSingleBean(PostgresInbox.class);
                Health health = context.getBean(InboxHealthIndicator.class).health(true);
                assertEquals(Status.DOWN, health.getStatus(), health::toString);
                assertEquals("missing", health.getDetails().get("schemaVersion"));
            });
        }
    }

    @Test
    void withAMeterRegistryTheInboxCountsIntoItAfterTheCommitOnly() {
        sqlite().withConfiguration(AutoConfigurations.of(InboxMetricsAutoConfiguration.class))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(InboxMetrics.class);
            SpringInbox inbox = context.getBean(SpringInbox.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            TransactionTemplate transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));

            transactions.executeWithoutResult(status -> {
                inbox.apply("m-1", Content.of(1), tx -> { });
                status.setRollbackOnly();
            });
            assertEquals(0.0, applied(registry), "a rolled-back apply is not counted");
            inbox.apply("m-1", Content.of(1), tx -> { });
            inbox.apply("m-1", Content.of(1), tx -> { });
            assertEquals(1.0, applied(registry));
            assertEquals(1.0, registry.get("inbox.messages").tag("inbox", "default").tag("outcome", "duplicate")
                    .counter().count());
        });
    }

    private static double applied(MeterRegistry registry) {
        var counter = registry.find("inbox.messages").tag("inbox", "default").tag("outcome", "applied").counter();
        return counter == null ? 0.0 : counter.count();
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnInbox() {
        sqlite().withUserConfiguration(OwnInbox.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(Inbox.class);
            JdbiInbox own = context.getBean(JdbiInbox.class);
            assertEquals("own", own.name());
            assertSame(own, context.getBean(SpringInbox.class).inbox());
        });
    }

    @Test
    void backsOffEntirelyWhenDisabled() {
        sqlite().withPropertyValues("inbox.enabled=false").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean(Inbox.class).doesNotHaveBean(SpringInbox.class));
    }

    @Test
    void refusesBadPropertiesByName() {
        assertRefused("inbox.busy-timeout=2h", "inbox.busy-timeout");
        assertRefused("inbox.name=no spaces", "inbox.name");
        assertRefused("inbox.retention=-1d", "inbox.retention");
        assertRefused("inbox.retention=5m", "inbox.retention");      // not longer than the 10 min skew margin
        assertRefused("inbox.commit-mode=sideways", "inbox.commit-mode");
        assertRefused("inbox.schema=maybe", "inbox.schema");
        assertRefused("inbox.tables.prefix=Orders", "inbox.tables.prefix");
        assertRefused("inbox.tables.prefix=orders;drop", "inbox.tables.prefix");
        assertRefused("inbox.tables.prefix=" + "p".repeat(33), "inbox.tables.prefix");
        assertRefused("inbox.tables.schema=bill ing", "inbox.tables.schema");
        assertRefused("inbox.tables.schema=billing", "inbox.tables.schema");   // SQLite has no schemas
        assertRefused("inbox.max-result-bytes=0", "inbox.max-result-bytes");
        assertRefused("inbox.max-result-bytes=67108865", "inbox.max-result-bytes");
        assertRefused("inbox.instances.a.tables.prefix=a'b", "inbox.instances.a.tables.prefix");
        assertRefused("inbox.instances.a.max-result-bytes=-1", "inbox.instances.a.max-result-bytes");
        sqlite().withPropertyValues("inbox.instances.a.name=a", "inbox.tables.prefix=orders_").run(context ->
                assertTrue(messages(context.getStartupFailure()).contains("inbox.tables: set beside inbox.instances")));
    }

    @Test
    void aRefusedPrefixCreatesNothing() throws Exception {
        sqlite().withPropertyValues("inbox.tables.prefix=x y").run(context -> assertThat(context).hasFailed());
        try (java.sql.Connection connection = java.sql.DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("app.db"));
                java.sql.ResultSet tables = connection.createStatement().executeQuery(
                        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'")) {
            tables.next();
            assertEquals(0, tables.getInt(1), "no table was created");
        }
    }

    @Test
    void thePrefixAndLimitReachTheInboxAndHealthShowsTheTablesAndLevel() {
        sqlite().withPropertyValues("inbox.tables.prefix=orders_", "inbox.max-result-bytes=1024").run(context -> {
            assertThat(context).hasNotFailed();
            SqliteInbox inbox = context.getBean(SqliteInbox.class);
            assertEquals(dev.idempotent.inbox.InboxTables.prefix("orders_"), inbox.settings().tables());
            assertEquals(1024, inbox.settings().maxResultBytes());
            context.getBean(SpringInbox.class).apply("t-1", Content.of(1), tx -> { });
            int rows = inbox.jdbi().withHandle(h -> h.createQuery("SELECT COUNT(*) FROM orders_message").mapTo(Integer.class).one());
            assertEquals(1, rows);

            Health health = context.getBean(InboxHealthIndicator.class).health(true);
            assertEquals(Status.UP, health.getStatus());
            assertEquals("tables orders_*", health.getDetails().get("tables"));
            assertEquals(dev.idempotent.inbox.spi.jdbc.SchemaMigrations.known("inbox").toString(),
                    health.getDetails().get("schemaLevel"));
        });
    }

    private void assertRefused(String property, String named) {
        sqlite().withPropertyValues(property).run(context -> {
            assertThat(context).hasFailed();
            String messages = messages(context.getStartupFailure());
            assertTrue(messages.contains(named), () -> property + " was refused without naming " + named + ": " + messages);
        });
    }

    private static String messages(Throwable failure) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }

    @Test
    void healthAndEndpointReportTheInbox() {
        sqlite().run(context -> {
            // Not exposed unless the application exposes it, as Actuator does with every endpoint but health.
            assertThat(context).hasNotFailed().hasSingleBean(InboxHealthIndicator.class).doesNotHaveBean(InboxEndpoint.class);
            SpringInbox inbox = context.getBean(SpringInbox.class);
            inbox.apply("h-1", Content.of(3), tx -> { });

            Health health = context.getBean(InboxHealthIndicator.class).health(true);
            assertEquals(Status.UP, health.getStatus());
            assertEquals(1, health.getDetails().get("schemaVersion"));
            assertEquals("default", health.getDetails().get("name"));
        });
    }

    @Test
    void endpointLooksUpOneIdWithoutItsContent() {
        sqlite().withPropertyValues("management.endpoints.web.exposure.include=inbox").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(InboxEndpoint.class);
            context.getBean(SpringInbox.class).apply("e-1", Content.of(42), tx -> { });
            InboxEndpoint endpoint = context.getBean(InboxEndpoint.class);

            Map<String, Object> record = endpoint.record("e-1");
            assertEquals("e-1", record.get("id"));
            assertEquals(64, record.get("fingerprint").toString().length());
            assertTrue(record.keySet().stream().noneMatch(key -> key.contains("content") && !key.equals("contentType")),
                    record::toString);
            assertEquals(null, endpoint.record("never-sent"));
            InboxEndpoint.Summary summary = (InboxEndpoint.Summary) endpoint.summary();
            assertEquals(1, summary.stats().applied());
            assertEquals("tables inbox_*", summary.tables());
            assertEquals(dev.idempotent.inbox.spi.jdbc.SchemaMigrations.known("inbox").toString(), summary.schemaLevel());
        });
    }

    @Test
    void everyPropertyHasMetadataForIdeCompletion() throws Exception {
        // Every Spring Boot jar has a file of that name; ours is the one that describes InboxProperties.
        String metadata = "";
        var files = getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json");
        while (files.hasMoreElements()) {
            try (var in = files.nextElement().openStream()) {
                String text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                if (text.contains("\"dev.idempotent.inbox.spring.InboxProperties\"")) {
                    metadata = text;
                }
            }
        }
        assertTrue(!metadata.isEmpty(), "the starter carries configuration metadata");
        for (String property : java.util.List.of("inbox.name", "inbox.busy-timeout", "inbox.retention", "inbox.commit-mode",
                "inbox.schema", "inbox.enabled", "inbox.instances", "inbox.tables.prefix", "inbox.tables.schema",
                "inbox.max-result-bytes")) {
            java.util.regex.Matcher entry = java.util.regex.Pattern.compile(
                    "\\{[^{}]*\"name\": \"" + java.util.regex.Pattern.quote(property) + "\"[^{}]*\\}").matcher(metadata);
            assertTrue(entry.find(), property + " in the metadata");
            assertTrue(entry.group().contains("\"description\""), property + " is described: " + entry.group());
            assertTrue(!entry.group().contains("{@"), property + "'s description has no javadoc tags: " + entry.group());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnInbox {
        @Bean(destroyMethod = "close")
        SqliteInbox ownInbox(javax.sql.DataSource dataSource) {
            return SqliteInbox.builder(org.jdbi.v3.core.Jdbi.create(dataSource)).name("own").build();
        }
    }
}
