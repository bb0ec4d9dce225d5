package dev.idempotent.inbox.spring.metrics;

import dev.idempotent.inbox.CallContext;
import dev.idempotent.inbox.CallObserver;
import dev.idempotent.inbox.micrometer.InboxObservationConvention;
import dev.idempotent.inbox.micrometer.InboxObservations;
import dev.idempotent.inbox.micrometer.PropagatedCallContext;
import dev.idempotent.inbox.spring.InboxAutoConfiguration;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * An observation of every call of every auto-configured inbox, where the application has
 * {@code inbox-micrometer} and an {@link ObservationRegistry} (Spring Boot's observations, which
 * Micrometer Tracing turns into spans): an {@link InboxObservations} bean, which each inbox the
 * starter builds takes as its {@link CallObserver}, and a {@link PropagatedCallContext} as its
 * {@link CallContext}, so that under group commit an effect run on another caller's thread sees
 * its own caller's observation and MDC. A joined call, {@code SpringInbox}'s in a transaction,
 * is observed until the transaction commits or rolls back. A {@code CallObserver} or
 * {@code CallContext} bean of the application's own replaces the one here.
 */
@AutoConfiguration(before = InboxAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({InboxObservations.class, ObservationRegistry.class, ContextSnapshotFactory.class})
@ConditionalOnBean(ObservationRegistry.class)
public final class InboxObservationAutoConfiguration {

    /** For Spring. */
    public InboxObservationAutoConfiguration() {
    }

    /**
     * The observations {@code inbox.apply} of every inbox, named and keyed by the application's
     * {@link InboxObservationConvention} if it has exactly one, else by the default.
     *
     * @param registry the application's registry
     * @param convention the application's convention, if any
     * @return the observer every auto-configured inbox is built with
     */
    @Bean
    @ConditionalOnMissingBean(CallObserver.class)
    public InboxObservations inboxObservations(ObservationRegistry registry,
            ObjectProvider<InboxObservationConvention> convention) {
        InboxObservationConvention own = convention.getIfUnique();
        return own == null ? InboxObservations.of(registry) : InboxObservations.of(registry, own);
    }

    /**
     * {@return the caller's context-propagation values and MDC}, carried to its effect.
     */
    @Bean
    @ConditionalOnMissingBean(CallContext.class)
    public CallContext inboxCallContext() {
        return PropagatedCallContext.withMdc();
    }
}
