package dev.idempotent.inbox.spring.actuate;

import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.spring.InboxAutoConfiguration;
import java.time.Clock;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The inbox's Actuator parts, where the application has Actuator: the health contributor
 * {@code inbox} ({@code management.health.inbox.enabled=false} turns it off) and the {@code inbox}
 * endpoint, available like any endpoint once the application exposes it.
 */
@AutoConfiguration(after = InboxAutoConfiguration.class)
@ConditionalOnSingleCandidate(JdbiInbox.class)
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
        @ConditionalOnMissingBean(name = "inboxHealthIndicator")
        public InboxHealthIndicator inboxHealthIndicator(JdbiInbox inbox) {
            return new InboxHealthIndicator(inbox, Clock.systemUTC());
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
         * @param inbox the inbox
         * @return the endpoint
         */
        @Bean
        @ConditionalOnMissingBean
        public InboxEndpoint inboxEndpoint(JdbiInbox inbox) {
            return new InboxEndpoint(inbox);
        }
    }
}
