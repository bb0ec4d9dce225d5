package dev.idempotent.inbox.spring.metrics;

import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.micrometer.InboxMetrics;
import dev.idempotent.inbox.spring.InboxAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The inbox's meters, where the application has {@code inbox-micrometer} and a
 * {@link MeterRegistry} (Spring Boot's metrics): an {@link InboxMetrics} bean, which the
 * auto-configured inbox takes as a listener ({@code inbox.messages} by {@code outcome}, the queue
 * and transaction timers, group sizes, purges), and which is bound to every {@link Inbox} bean
 * for its retention horizon gauge. Like all listeners, it counts a joined call after the commit.
 */
@AutoConfiguration(before = InboxAutoConfiguration.class,
        afterName = {"org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass({InboxMetrics.class, MeterRegistry.class})
@ConditionalOnBean(MeterRegistry.class)
public final class InboxMetricsAutoConfiguration {

    /** For Spring. */
    public InboxMetricsAutoConfiguration() {
    }

    /**
     * The meters of every inbox, tagged by the inbox's name.
     *
     * @param registry the application's registry
     * @return the metrics, an inbox listener
     */
    @Bean
    @ConditionalOnMissingBean
    public InboxMetrics inboxMetrics(MeterRegistry registry) {
        return InboxMetrics.of(registry);
    }

    /**
     * Binds the metrics to every inbox once all beans exist: the horizon gauge reads the stored
     * horizon then, not at the first purge.
     *
     * @param metrics the metrics
     * @param inboxes the application's inboxes
     * @return the binding step
     */
    @Bean
    public SmartInitializingSingleton inboxMetricsBinding(InboxMetrics metrics, ObjectProvider<Inbox<?>> inboxes) {
        return () -> inboxes.orderedStream().forEach(metrics::bind);
    }
}
