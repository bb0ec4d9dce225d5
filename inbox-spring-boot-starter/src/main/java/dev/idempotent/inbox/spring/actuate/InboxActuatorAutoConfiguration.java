package dev.idempotent.inbox.spring.actuate;

import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.spring.InboxAutoConfiguration;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * The inbox's Actuator parts, where the application has Actuator: the health contributor
 * {@code inbox} ({@code management.health.inbox.enabled=false} turns it off) and the {@code inbox}
 * endpoint, available like any endpoint once the application exposes it. Both cover every
 * {@link JdbiInbox} bean: with several, the contributor is a composite of one per inbox, by the
 * inbox's name ({@code /actuator/health/inbox/{inbox}}).
 */
@AutoConfiguration(after = InboxAutoConfiguration.class)
@ConditionalOnBean(JdbiInbox.class)
public final class InboxActuatorAutoConfiguration {

    /** For Spring. */
    public InboxActuatorAutoConfiguration() {
    }

    /** The health contributor, with Spring Boot's health module. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("inbox")
    public static class Health {

        /** For Spring. */
        public Health() {
        }

        /**
         * The inbox's health contributor, named {@code inbox}.
         *
         * @param inbox the inbox
         * @return the contributor
         */
        @Bean
        @ConditionalOnSingleCandidate(JdbiInbox.class)
        @ConditionalOnMissingBean(name = "inboxHealthIndicator")
        public InboxHealthIndicator inboxHealthIndicator(JdbiInbox inbox) {
            return new InboxHealthIndicator(inbox, Clock.systemUTC());
        }

        /**
         * The health contributor of several inboxes, named {@code inbox}: one indicator per inbox,
         * by the inbox's name.
         *
         * @param inboxes the inboxes
         * @return the composite contributor
         * @throws IllegalArgumentException if two inboxes share a name
         */
        @Bean
        @Conditional(SeveralInboxes.class)
        @ConditionalOnMissingBean(name = {"inboxHealthIndicator", "inboxHealthContributor"})
        public CompositeHealthContributor inboxHealthContributor(ObjectProvider<JdbiInbox> inboxes) {
            Map<String, JdbiInbox> byName = new LinkedHashMap<>();
            inboxes.orderedStream().forEach(inbox -> {
                if (byName.putIfAbsent(inbox.name(), inbox) != null) {
                    throw new IllegalArgumentException("two inboxes are named '" + inbox.name()
                            + "'; the inbox health contributor tells inboxes apart by name");
                }
            });
            return CompositeHealthContributor.fromMap(byName, inbox -> new InboxHealthIndicator(inbox, Clock.systemUTC()));
        }
    }

    /** More than one inbox, none of them primary. */
    static final class SeveralInboxes extends NoneNestedConditions {

        SeveralInboxes() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnSingleCandidate(JdbiInbox.class)
        static final class OneInbox {
        }
    }

    /** The endpoint, with Spring Boot's Actuator. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Endpoint.class)
    @ConditionalOnAvailableEndpoint(InboxEndpoint.class)
    public static class Endpoints {

        /** For Spring. */
        public Endpoints() {
        }

        /**
         * The {@code inbox} endpoint.
         *
         * @param inboxes the inboxes, every one of which it answers for
         * @return the endpoint
         */
        @Bean
        @ConditionalOnMissingBean
        public InboxEndpoint inboxEndpoint(ObjectProvider<JdbiInbox> inboxes) {
            return new InboxEndpoint(inboxes.orderedStream().toList());
        }
    }
}
