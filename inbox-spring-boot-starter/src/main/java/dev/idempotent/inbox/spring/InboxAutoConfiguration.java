package dev.idempotent.inbox.spring;

import dev.idempotent.inbox.CallContext;
import dev.idempotent.inbox.CallObserver;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Builds an {@link Inbox} over the application's single {@link DataSource}, its store chosen from
 * the database the data source reaches (SQLite, PostgreSQL or MariaDB) and its settings from the
 * {@code inbox.*} properties ({@link InboxProperties}), and a {@link SpringInbox} that joins the
 * application's transactions. Each bean backs off when the application defines its own;
 * {@code inbox.enabled=false} turns both off. With {@code inbox.instances.<key>.*} it builds one
 * inbox and one {@link SpringInbox} per entry instead, the beans {@code <key>Inbox} and
 * {@code <key>SpringInbox}. Every inbox it builds takes the application's {@link InboxListener}s,
 * and its {@link CallObserver} and {@link CallContext} if it has one of each (the observations' of
 * {@code metrics.InboxObservationAutoConfiguration}, when it has an {@code ObservationRegistry}).
 */
@AutoConfiguration(
        after = {DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class},
        afterName = {"org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
                "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration"})
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBooleanProperty(name = "inbox.enabled", matchIfMissing = true)
@EnableConfigurationProperties(InboxProperties.class)
public final class InboxAutoConfiguration {

    /** For Spring. */
    public InboxAutoConfiguration() {
    }

    /**
     * The inbox, closed with the context.
     *
     * @param dataSource the application's data source
     * @param properties the {@code inbox.*} properties
     * @param listeners the application's {@link InboxListener}s (the metrics' among them), told of
     *     every call in their order
     * @param observers the application's {@link CallObserver} (the observations'), used if it has
     *     exactly one
     * @param callContexts the application's {@link CallContext}, used if it has exactly one
     * @return the open inbox
     */
    @Bean(destroyMethod = "close")
    @Conditional(InboxInstances.NoneConfigured.class)
    @ConditionalOnMissingBean(Inbox.class)
    // After Flyway, Liquibase and spring.sql.init: under validate, their migrations must have run.
    @DependsOnDatabaseInitialization
    public JdbiInbox inbox(DataSource dataSource, InboxProperties properties, ObjectProvider<InboxListener> listeners,
            ObjectProvider<CallObserver> observers, ObjectProvider<CallContext> callContexts) {
        InboxStores.Store store = InboxStores.of(dataSource);
        InboxStores.checkTables(store, "inbox.tables", properties.tables());
        return new Extensions(listeners, observers, callContexts).build(
                properties.applyTo(InboxStores.builder(store, InboxStores.jdbi(dataSource))),
                properties.schema() == null ? store.defaultSchemaMode : properties.schema());
    }

    /**
     * The beans every auto-configured inbox is built with: all {@link InboxListener}s (the
     * metrics' among them), told of every call in their order; the {@link CallObserver} (the
     * observations') and the {@link CallContext}, if the application has exactly one of each, else
     * the builder's defaults. Looked up when an inbox is built, not before.
     */
    record Extensions(ObjectProvider<InboxListener> listeners, ObjectProvider<CallObserver> observers,
            ObjectProvider<CallContext> callContexts) {

        <I extends JdbiInbox> I build(InboxBuilder<I> configured, SchemaMode schema) {
            InboxBuilder<I> builder = configured.listener(InboxListeners.of(listeners.orderedStream().toList()));
            CallObserver observer = observers.getIfUnique();
            if (observer != null) {
                builder = builder.observer(observer);
            }
            CallContext callContext = callContexts.getIfUnique();
            if (callContext != null) {
                builder = builder.callContext(callContext);
            }
            return builder.schema(schema).build();
        }
    }

    /**
     * The inbox joining the application's transactions.
     *
     * @param inbox the inbox, the application's own if it defines one
     * @param dataSource the application's data source
     * @param transactionManager the application's transaction managers: the one of {@code dataSource}
     *     opens the inbox's transactions when a caller has none, else the primary or only one
     * @return the bean to apply messages through
     */
    @Bean
    @Conditional(InboxInstances.NoneConfigured.class)
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(JdbiInbox.class)
    public SpringInbox springInbox(
            JdbiInbox inbox, DataSource dataSource, ObjectProvider<PlatformTransactionManager> transactionManager) {
        return new SpringInbox(inbox, dataSource, ownTransactions(dataSource, transactionManager));
    }

    /**
     * The transactions a {@link SpringInbox} opens when its caller has none: through the one
     * transaction manager of {@code dataSource} if the application has exactly one, whichever is
     * primary, else through its only or primary transaction manager, else none. With several data
     * sources the primary manager may be another's, whose transaction the inbox would refuse.
     */
    static TransactionTemplate ownTransactions(DataSource dataSource, ObjectProvider<PlatformTransactionManager> managers) {
        DataSource key = SpringInbox.transactionKey(dataSource);
        List<PlatformTransactionManager> own = managers.orderedStream().filter(manager -> manages(manager, key)).toList();
        PlatformTransactionManager manager = own.size() == 1 ? own.get(0) : managers.getIfUnique();
        return manager == null ? null : new TransactionTemplate(manager);
    }

    private static boolean manages(PlatformTransactionManager manager, DataSource key) {
        if (manager instanceof ResourceTransactionManager resources
                && resources.getResourceFactory() instanceof DataSource managed) {
            return SpringInbox.transactionKey(managed) == key;
        }
        return SpringInbox.JPA_PRESENT && JpaTransactions.manages(manager, key);
    }

    /**
     * The several inboxes of {@code inbox.instances}, in place of the single one: the beans
     * {@code <key>Inbox} and {@code <key>SpringInbox} of each entry.
     */
    @Configuration(proxyBeanMethods = false)
    @Conditional(InboxInstances.Configured.class)
    @Import(InboxInstances.Registrar.class)
    static class Several {

        // After Flyway, Liquibase and spring.sql.init, and so is every inbox it builds.
        @Bean
        @DependsOnDatabaseInitialization
        InboxInstances inboxInstances(InboxProperties properties, DataSource dataSource,
                ObjectProvider<InboxListener> listeners, ObjectProvider<CallObserver> observers,
                ObjectProvider<CallContext> callContexts, ObjectProvider<PlatformTransactionManager> transactionManager) {
            return new InboxInstances(properties, dataSource, new Extensions(listeners, observers, callContexts),
                    transactionManager);
        }
    }
}
