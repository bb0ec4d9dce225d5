package dev.idempotent.inbox.spring;

import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.support.BeanDefinitionBuilder;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The several inboxes of {@code inbox.instances.<key>.*}: builds each one's {@link JdbiInbox}
 * ({@code <key>Inbox}) and {@link SpringInbox} ({@code <key>SpringInbox}) over the application's
 * data source, with the application's listeners, observer and call context. It is a bean of its own, built after the
 * database initialisation, so that every inbox it builds is too.
 */
final class InboxInstances {

    private final InboxProperties properties;
    private final DataSource dataSource;
    private final InboxAutoConfiguration.Extensions extensions;
    private final ObjectProvider<PlatformTransactionManager> transactionManager;

    InboxInstances(InboxProperties properties, DataSource dataSource, InboxAutoConfiguration.Extensions extensions,
            ObjectProvider<PlatformTransactionManager> transactionManager) {
        this.properties = properties;
        this.dataSource = dataSource;
        this.extensions = extensions;
        this.transactionManager = transactionManager;
    }

    JdbiInbox inbox(String key) {
        InboxProperties.Instance instance = Objects.requireNonNull(properties.instances().get(key), key);
        InboxStores.Store store = InboxStores.of(dataSource);
        InboxStores.checkTables(store, "inbox.instances." + key + ".tables", instance.tables());
        return extensions.build(
                InboxProperties.applyTo(InboxStores.builder(store, InboxStores.jdbi(dataSource)), key, instance),
                instance.schema() == null ? store.defaultSchemaMode : instance.schema());
    }

    SpringInbox springInbox(JdbiInbox inbox) {
        return new SpringInbox(inbox, dataSource, InboxAutoConfiguration.ownTransactions(dataSource, transactionManager));
    }

    static String inboxBean(String key) {
        return key + "Inbox";
    }

    static String springInboxBean(String key) {
        return key + "SpringInbox";
    }

    /** Whether {@code inbox.instances} has an entry, read without checking the entries. */
    static boolean configured(Environment environment) {
        return Binder.get(environment).bind("inbox.instances", Bindable.mapOf(String.class, Object.class))
                .map(instances -> !instances.isEmpty()).orElse(false);
    }

    /** Matches when {@code inbox.instances} has an entry. */
    static final class Configured extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return configured(context.getEnvironment())
                    ? ConditionOutcome.match("inbox.instances has entries")
                    : ConditionOutcome.noMatch("inbox.instances has no entries");
        }
    }

    /** Matches when {@code inbox.instances} has none: the single inbox. */
    static final class NoneConfigured extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            return configured(context.getEnvironment())
                    ? ConditionOutcome.noMatch("inbox.instances has entries")
                    : ConditionOutcome.match("inbox.instances has no entries");
        }
    }

    /**
     * Registers the two beans of every instance. The keys must be known before any bean exists,
     * so the properties are bound here, and a bad one fails start-up here, by its full name.
     */
    static final class Registrar implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {

        private Environment environment;
        private BeanFactory beanFactory;

        @Override
        public void setEnvironment(Environment environment) {
            this.environment = environment;
        }

        @Override
        public void setBeanFactory(BeanFactory beanFactory) {
            this.beanFactory = beanFactory;
        }

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            Map<String, InboxProperties.Instance> instances = Binder.get(environment)
                    .bind("inbox", InboxProperties.class).map(InboxProperties::instances).orElse(Map.of());
            for (String key : instances.keySet()) {
                AbstractBeanDefinition inbox = BeanDefinitionBuilder
                        .rootBeanDefinition(JdbiInbox.class, () -> instances().inbox(key))
                        .setDestroyMethodName("close")
                        .getBeanDefinition();
                registry.registerBeanDefinition(inboxBean(key), inbox);
                AbstractBeanDefinition springInbox = BeanDefinitionBuilder
                        .rootBeanDefinition(SpringInbox.class,
                                () -> instances().springInbox(beanFactory.getBean(inboxBean(key), JdbiInbox.class)))
                        .getBeanDefinition();
                registry.registerBeanDefinition(springInboxBean(key), springInbox);
            }
        }

        private InboxInstances instances() {
            return beanFactory.getBean(InboxInstances.class);
        }
    }
}
