package dev.idempotent.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.postgres.PostgresInbox;
import dev.idempotent.inbox.spring.actuate.InboxActuatorAutoConfiguration;
import dev.idempotent.inbox.spring.actuate.InboxEndpoint;
import dev.idempotent.inbox.spring.actuate.InboxHealthIndicator;
import dev.idempotent.inbox.spring.metrics.InboxMetricsAutoConfiguration;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Several named inboxes from {@code inbox.instances.<key>.*}, over one SQLite data source. */
class InboxInstancesTest {

    @TempDir
    Path dir;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, InboxAutoConfiguration.class));

    private String url() {
        return "jdbc:sqlite:" + dir.resolve("app.db");
    }

    private ApplicationContextRunner sqlite() {
        return runner.withPropertyValues("spring.datasource.url=" + url());
    }

    private ApplicationContextRunner two() {
        return sqlite().withPropertyValues(
                "inbox.instances.payments.busy-timeout=2s", "inbox.instances.payments.retention=7d",
                "inbox.instances.orders.name=orders-eu", "inbox.instances.orders.commit-mode=per-caller",
                "inbox.instances.orders.retention=1d");
    }

    @Test
    void twoInstancesOnTablesOfTheirOwnWorkSideBySideWithTheirOwnResultLimits() {
        sqlite().withPropertyValues("inbox.instances.payments.tables.prefix=pay_",
                "inbox.instances.payments.max-result-bytes=8", "inbox.instances.orders.tables.prefix=ord_").run(context -> {
            assertThat(context).hasNotFailed();
            SqliteInbox payments = context.getBean("paymentsInbox", SqliteInbox.class);
            SqliteInbox orders = context.getBean("ordersInbox", SqliteInbox.class);
            assertEquals(dev.idempotent.inbox.InboxTables.prefix("pay_"), payments.settings().tables());
            assertEquals(dev.idempotent.inbox.InboxTables.prefix("ord_"), orders.settings().tables());
            assertEquals(8, payments.settings().maxResultBytes());
            assertEquals(dev.idempotent.inbox.InboxSettings.DEFAULT_MAX_RESULT_BYTES, orders.settings().maxResultBytes());

            SpringResultInbox<String> paid = context.getBean("paymentsSpringInbox", SpringInbox.class)
                    .storingResults(SpringResultInboxTest.TEXT);
            SpringResultInbox<String> ordered = context.getBean("ordersSpringInbox", SpringInbox.class)
                    .storingResults(SpringResultInboxTest.TEXT);
            assertThrows(dev.idempotent.inbox.StoredResultException.class,
                    () -> paid.apply("x-1", Content.of(1), tx -> "nine char"));
            assertInstanceOf(Outcome.Applied.class, ordered.apply("x-1", Content.of(1), tx -> "nine char"));
            assertInstanceOf(Outcome.Applied.class, paid.apply("x-1", Content.of(1), tx -> "paid"));

            int inOrders = orders.jdbi().withHandle(h -> h.createQuery("SELECT COUNT(*) FROM ord_message").mapTo(Integer.class).one());
            int inPayments = orders.jdbi().withHandle(h -> h.createQuery("SELECT COUNT(*) FROM pay_message").mapTo(Integer.class).one());
            assertEquals(1, inOrders);
            assertEquals(1, inPayments);
        });
    }

    @Test
    void twoInstancesAreTwoInboxesWithTheirOwnNamesAndSettings() {
        two().run(context -> {
            assertThat(context).hasNotFailed().hasBean("paymentsInbox").hasBean("ordersInbox")
                    .hasBean("paymentsSpringInbox").hasBean("ordersSpringInbox")
                    .doesNotHaveBean("inbox").doesNotHaveBean("springInbox");
            assertEquals(2, context.getBeansOfType(Inbox.class).size());
            assertEquals(2, context.getBeansOfType(SpringInbox.class).size());

            SqliteInbox payments = context.getBean("paymentsInbox", SqliteInbox.class);
            assertEquals("payments", payments.name(), "the name defaults to the key");
            assertEquals(Duration.ofSeconds(2), payments.settings().busyTimeout());
            assertEquals(Duration.ofDays(7), payments.settings().retention());
            assertEquals(CommitMode.GROUP, payments.settings().commitMode(), "SQLite's default");

            SqliteInbox orders = context.getBean("ordersInbox", SqliteInbox.class);
            assertEquals("orders-eu", orders.name());
            assertEquals(Duration.ofDays(1), orders.settings().retention());
            assertEquals(CommitMode.PER_CALLER, orders.settings().commitMode());

            assertSame(payments, context.getBean("paymentsSpringInbox", SpringInbox.class).inbox());
            assertSame(orders, context.getBean("ordersSpringInbox", SpringInbox.class).inbox());

            // One id, two inboxes: each decides for itself.
            assertInstanceOf(Outcome.Applied.class,
                    context.getBean("paymentsSpringInbox", SpringInbox.class).apply("x-1", Content.of(1), tx -> { }));
            assertInstanceOf(Outcome.Applied.class,
                    context.getBean("ordersSpringInbox", SpringInbox.class).apply("x-1", Content.of(2), tx -> { }));
            assertInstanceOf(Outcome.Duplicate.class, payments.apply("x-1", Content.of(1), tx -> { }));
            assertEquals(1, payments.stats().applied());
            assertEquals(1, orders.stats().applied());
        });
    }

    @Test
    void qualifiersInjectEachInstance() {
        two().withUserConfiguration(Consumers.class).run(context -> {
            assertThat(context).hasNotFailed();
            Consumers.Both both = context.getBean(Consumers.Both.class);
            assertEquals("payments", both.payments().inbox().name());
            assertEquals("orders-eu", both.orders().name());
            assertNotSame(both.payments().inbox(), both.orders());
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Consumers {
        record Both(SpringInbox payments, JdbiInbox orders) {
        }

        @Bean
        Both both(@Qualifier("paymentsSpringInbox") SpringInbox payments, @Qualifier("ordersInbox") JdbiInbox orders) {
            return new Both(payments, orders);
        }
    }

    @Test
    void healthAndEndpointCoverEveryInboxByName() {
        two().withConfiguration(AutoConfigurations.of(InboxActuatorAutoConfiguration.class))
                .withPropertyValues("management.endpoints.web.exposure.include=inbox").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(InboxHealthIndicator.class).hasSingleBean(InboxEndpoint.class);
            context.getBean("ordersSpringInbox", SpringInbox.class).apply("e-1", Content.of(42), tx -> { });

            CompositeHealthContributor health = context.getBean("inboxHealthContributor", CompositeHealthContributor.class);
            for (String name : List.of("payments", "orders-eu")) {
                Health one = ((InboxHealthIndicator) health.getContributor(name)).health(true);
                assertEquals(Status.UP, one.getStatus(), one::toString);
                assertEquals(name, one.getDetails().get("name"));
            }
            assertEquals(2, health.stream().count());

            InboxEndpoint endpoint = context.getBean(InboxEndpoint.class);
            InboxEndpoint.Inboxes summary = assertInstanceOf(InboxEndpoint.Inboxes.class, endpoint.summary());
            assertEquals(List.of("payments", "orders-eu"), List.copyOf(summary.inboxes().keySet()));
            assertEquals(0, summary.inboxes().get("payments").stats().applied());
            assertEquals(1, summary.inboxes().get("orders-eu").stats().applied());

            assertEquals("e-1", endpoint.recordIn("orders-eu", "e-1").get("id"));
            assertEquals("orders-eu", endpoint.recordIn("orders-eu", "e-1").get("inbox"));
            assertNull(endpoint.recordIn("payments", "e-1"), "not the other inbox's");
            assertNull(endpoint.recordIn("nowhere", "e-1"), "no such inbox");
            InvalidEndpointRequestException unnamed =
                    assertThrows(InvalidEndpointRequestException.class, () -> endpoint.record("e-1"));
            assertTrue(unnamed.getMessage().contains("/actuator/inbox/{inbox}/{id}"), unnamed.getMessage());
        });
    }

    @Test
    void theSingleInboxEndpointAnswersAsBefore() {
        sqlite().withConfiguration(AutoConfigurations.of(InboxActuatorAutoConfiguration.class))
                .withPropertyValues("management.endpoints.web.exposure.include=inbox").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(InboxHealthIndicator.class)
                    .doesNotHaveBean(CompositeHealthContributor.class);
            context.getBean(SpringInbox.class).apply("s-1", Content.of(1), tx -> { });
            InboxEndpoint endpoint = context.getBean(InboxEndpoint.class);
            InboxEndpoint.Summary summary = assertInstanceOf(InboxEndpoint.Summary.class, endpoint.summary());
            assertEquals("default", summary.name());
            assertEquals("s-1", endpoint.record("s-1").get("id"));
            assertEquals("s-1", endpoint.recordIn("default", "s-1").get("id"));
        });
    }

    @Test
    void metricsAreBoundToEveryInboxAndTaggedByItsName() {
        two().withConfiguration(AutoConfigurations.of(InboxMetricsAutoConfiguration.class))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context).hasNotFailed();
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            // Bound at start-up: each inbox's meters exist before its first call.
            for (String name : List.of("payments", "orders-eu")) {
                assertEquals(0.0, registry.get("inbox.messages").tag("inbox", name).tag("outcome", "applied")
                        .counter().count());
                assertNotNull(registry.find("inbox.retention.horizon.age").tag("inbox", name).timeGauge(), name);
            }
            context.getBean("paymentsSpringInbox", SpringInbox.class).apply("m-1", Content.of(1), tx -> { });
            assertEquals(1.0, registry.get("inbox.messages").tag("inbox", "payments").tag("outcome", "applied")
                    .counter().count());
            assertEquals(0.0, registry.get("inbox.messages").tag("inbox", "orders-eu").tag("outcome", "applied")
                    .counter().count());
        });
    }

    @Test
    void instancesUnderValidateAreBuiltAfterSpringBootsFlywayMigration() {
        try (PostgresSchema schema = new PostgresSchema()) {
            runner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
                    .withPropertyValues("spring.datasource.url=" + schema.url(),
                            "spring.datasource.username=" + PostgresSchema.USER,
                            "spring.flyway.schemas=" + schema.name,
                            "spring.flyway.locations=classpath:dev/idempotent/inbox/postgres/flyway",
                            "inbox.instances.payments.retention=7d", "inbox.instances.orders.busy-timeout=2s")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        PostgresInbox payments = context.getBean("paymentsInbox", PostgresInbox.class);
                        assertEquals(CommitMode.PER_CALLER, payments.settings().commitMode(), "PostgreSQL's default");
                        assertInstanceOf(Outcome.Applied.class, context.getBean("ordersSpringInbox", SpringInbox.class)
                                .apply("f-1", Content.of(1), tx -> { }));
                    });
        }
    }

    @Test
    void aBadInstancePropertyIsRefusedByItsFullName() {
        assertRefused("inbox.instances.payments.busy-timeout=2h", "inbox.instances.payments.busy-timeout");
        assertRefused("inbox.instances.payments.retention=5m", "inbox.instances.payments.retention");
        assertRefused("inbox.instances.payments.name=no spaces", "inbox.instances.payments.name");
        assertRefused("inbox.instances.payments.commit-mode=sideways", "inbox.instances.payments.commit-mode");
        assertRefused("inbox.instances.payments.schema=maybe", "inbox.instances.payments.schema");
    }

    @Test
    void twoInstancesOfOneNameAreRefusedByName() {
        sqlite().withPropertyValues("inbox.instances.payments.retention=7d", "inbox.instances.billing.name=payments")
                .run(context -> {
                    assertThat(context).hasFailed();
                    String messages = messages(context.getStartupFailure());
                    assertTrue(messages.contains("inbox.instances.billing.name") && messages.contains("'payments'")
                            && messages.contains("inbox.instances.payments"), messages);
                });
    }

    @Test
    void aSingleInboxSettingBesideInstancesIsRefused() {
        sqlite().withPropertyValues("inbox.instances.payments.retention=7d", "inbox.retention=1d").run(context -> {
            assertThat(context).hasFailed();
            String messages = messages(context.getStartupFailure());
            assertTrue(messages.contains("inbox.retention") && messages.contains("inbox.instances"), messages);
        });
    }

    @Test
    void withoutInstancesTheSingleInboxIsUnchanged() {
        sqlite().withPropertyValues("inbox.name=receipts").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(Inbox.class).hasSingleBean(SpringInbox.class)
                    .hasBean("inbox").hasBean("springInbox").doesNotHaveBean(InboxInstances.class);
            assertEquals("receipts", context.getBean(JdbiInbox.class).name());
        });
    }

    private void assertRefused(String property, String named) {
        sqlite().withPropertyValues(property, "inbox.instances.orders.retention=7d").run(context -> {
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

    /**
     * Two SpringInbox beans in one Spring transaction: both ids commit with its one commit, and
     * neither remains after its rollback.
     */
    @Test
    void twoSpringInboxesInOneTransactionCommitAndRollBackTogether() {
        AtomicInteger commits = new AtomicInteger();
        SingleConnectionDataSource sqlite = new SingleConnectionDataSource(url(), true);
        try {
            two().withBean(DataSource.class, () -> countingCommits(sqlite, commits)).run(context -> {
                assertThat(context).hasNotFailed();
                SpringInbox payments = context.getBean("paymentsSpringInbox", SpringInbox.class);
                SpringInbox orders = context.getBean("ordersSpringInbox", SpringInbox.class);
                TransactionTemplate transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));

                transactions.executeWithoutResult(status -> {
                    payments.apply("r-1", Content.of(1), tx -> { });
                    orders.apply("r-2", Content.of(2), tx -> { });
                    status.setRollbackOnly();
                });
                assertEquals(0, recorded("payments", "r-1") + recorded("orders-eu", "r-2"), "both rolled back");

                int before = commits.get();
                transactions.executeWithoutResult(status -> {
                    assertInstanceOf(Outcome.Applied.class, payments.apply("r-1", Content.of(1), tx -> { }));
                    assertInstanceOf(Outcome.Applied.class, orders.apply("r-2", Content.of(2), tx -> { }));
                    assertEquals(0, recorded("payments", "r-1") + recorded("orders-eu", "r-2"),
                            "another connection sees neither before the commit");
                });
                assertEquals(before + 1, commits.get(), "one commit");
                assertEquals(1, recorded("payments", "r-1"));
                assertEquals(1, recorded("orders-eu", "r-2"));
                assertEquals(0, recorded("payments", "r-2") + recorded("orders-eu", "r-1"), "each id in its own inbox");
                assertEquals(1, payments.inbox().stats().applied());
                assertEquals(1, orders.inbox().stats().applied());
            });
        } finally {
            sqlite.destroy();
        }
    }

    /** Rows of {@code inbox} for {@code id}, read on a connection of its own. */
    private long recorded(String inbox, String id) {
        try (Connection connection = DriverManager.getConnection(url());
                var query = connection.prepareStatement("SELECT COUNT(*) FROM inbox_message WHERE inbox = ? AND id = ?")) {
            query.setString(1, inbox);
            query.setString(2, id);
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The data source, counting the commits of its connections. */
    private static DataSource countingCommits(DataSource target, AtomicInteger commits) {
        return new DelegatingDataSource(target) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                InvocationHandler counting = (proxy, method, args) -> {
                    if (method.getName().equals("commit")) {
                        commits.incrementAndGet();
                    }
                    try {
                        return method.invoke(connection, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                };
                return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                        new Class<?>[] {Connection.class}, counting);
            }
        };
    }
}
