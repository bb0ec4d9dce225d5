package dev.idempotent.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Which transaction manager the auto-configured SpringInbox opens its own transactions with, when
 * the application has two data sources and a transaction manager for each: the one of the inbox's
 * data source, whichever is primary, so that an effect's JdbcClient writes share the claim's
 * transaction outside a transaction too.
 */
class SpringInboxTransactionManagerTest {

    private static final PostgresSchema INBOX_DATABASE = new PostgresSchema(
            "CREATE TABLE stock (item TEXT PRIMARY KEY, total BIGINT NOT NULL)", "INSERT INTO stock VALUES ('snack', 0)");
    private static final PostgresSchema OTHER_DATABASE = new PostgresSchema();

    @AfterAll
    static void dropSchemas() {
        INBOX_DATABASE.close();
        OTHER_DATABASE.close();
    }

    private static HikariDataSource pool(PostgresSchema schema) {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(schema.url());
        pool.setUsername(PostgresSchema.USER);
        pool.setMaximumPoolSize(2);
        return pool;
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoDataSources {

        @Bean(destroyMethod = "close")
        @Primary
        HikariDataSource inboxDataSource() {
            return pool(INBOX_DATABASE);
        }

        @Bean(destroyMethod = "close")
        HikariDataSource otherDataSource() {
            return pool(OTHER_DATABASE);
        }

        @Bean
        DataSourceTransactionManager inboxTransactionManager(@Qualifier("inboxDataSource") DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OtherPrimary {
        @Bean
        @Primary
        DataSourceTransactionManager otherTransactionManager(@Qualifier("otherDataSource") DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class NonePrimary {
        @Bean
        DataSourceTransactionManager otherTransactionManager(@Qualifier("otherDataSource") DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(InboxAutoConfiguration.class))
            .withUserConfiguration(TwoDataSources.class)
            .withPropertyValues("inbox.schema=create");

    @Test
    void theInboxsTransactionManagerIsTakenThoughAnotherIsPrimary() {
        runner.withUserConfiguration(OtherPrimary.class).withPropertyValues("inbox.name=other-primary")
                .run(context -> rollsBackTheEffectsWritesWithTheClaim(context.getBean(SpringInbox.class),
                        context.getBean("inboxDataSource", DataSource.class), "p-1"));
    }

    @Test
    void theInboxsTransactionManagerIsTakenWhenNoneIsPrimary() {
        runner.withUserConfiguration(NonePrimary.class).withPropertyValues("inbox.name=none-primary")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    rollsBackTheEffectsWritesWithTheClaim(context.getBean(SpringInbox.class),
                            context.getBean("inboxDataSource", DataSource.class), "n-1");
                });
    }

    private static void rollsBackTheEffectsWritesWithTheClaim(SpringInbox inbox, DataSource dataSource, String id) {
        JdbcClient jdbc = JdbcClient.create(dataSource);
        long before = jdbc.sql("SELECT total FROM stock").query(Long.class).single();

        assertThrows(IllegalStateException.class, () -> inbox.apply(id, Content.of(5), tx -> {
            jdbc.sql("UPDATE stock SET total = total + 5").update();
            throw new IllegalStateException("effect failed");
        }));
        assertEquals(before, jdbc.sql("SELECT total FROM stock").query(Long.class).single(),
                "the effect's JdbcClient write rolled back with the claim: one transaction");
        assertTrue(inbox.inbox().find(id).isEmpty());

        assertInstanceOf(Outcome.Applied.class, inbox.apply(id, Content.of(5),
                tx -> jdbc.sql("UPDATE stock SET total = total + 5").update()));
        assertEquals(before + 5, jdbc.sql("SELECT total FROM stock").query(Long.class).single());
    }
}
