package dev.idempotent.inbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idempotent.inbox.CallContext;
import dev.idempotent.inbox.CallObserver;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import dev.idempotent.inbox.micrometer.InboxObservations;
import dev.idempotent.inbox.spring.metrics.InboxObservationAutoConfiguration;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * With an {@link ObservationRegistry} bean, every inbox the starter builds is observed, a joined
 * call until its Spring transaction commits or rolls back; without one, or without
 * {@code inbox-micrometer}, the inboxes work unobserved.
 */
class InboxObservationAutoConfigurationTest {

    @TempDir
    Path dir;

    private final TestObservationRegistry observations = TestObservationRegistry.create();

    private ApplicationContextRunner sqlite() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class, InboxAutoConfiguration.class,
                        InboxObservationAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"));
    }

    private ApplicationContextRunner observed() {
        return sqlite().withBean(ObservationRegistry.class, () -> observations);
    }

    @Test
    void aSpringInboxCallInATransactionIsObservedUntilItCommitsOrRollsBack() {
        observed().withPropertyValues("inbox.name=receipts").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(InboxObservations.class);
            JdbiInbox jdbiInbox = context.getBean(JdbiInbox.class);
            assertSame(context.getBean(InboxObservations.class), jdbiInbox.settings().observer());
            assertSame(context.getBean(CallContext.class), jdbiInbox.settings().callContext());
            SpringInbox inbox = context.getBean(SpringInbox.class);
            TransactionTemplate transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));

            transactions.executeWithoutResult(status -> {
                assertInstanceOf(Outcome.Applied.class, inbox.apply("r-1", Content.of(1), tx -> { }));
                assertThat(observations).hasSingleObservationThat().isNotStopped();
            });
            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasNameEqualTo("inbox.apply")
                    .hasLowCardinalityKeyValue("inbox", "receipts")
                    .hasLowCardinalityKeyValue("outcome", "applied")
                    .hasHighCardinalityKeyValue("message.id", "r-1")
                    .doesNotHaveError();
            observations.clear();

            transactions.executeWithoutResult(status -> {
                inbox.apply("r-2", Content.of(2), tx -> { });
                status.setRollbackOnly();
            });
            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasLowCardinalityKeyValue("outcome", "rolled_back")
                    .hasHighCardinalityKeyValue("message.id", "r-2");
            observations.clear();

            // Outside a transaction it opens its own, and the outcome it returns is final.
            assertInstanceOf(Outcome.Duplicate.class, inbox.apply("r-1", Content.of(1), tx -> { }));
            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasLowCardinalityKeyValue("outcome", "duplicate");
            observations.clear();

            IllegalStateException thrown = assertThrows(IllegalStateException.class,
                    () -> transactions.executeWithoutResult(status -> inbox.apply("r-3", Content.of(3), tx -> {
                        throw new IllegalStateException("the effect fails");
                    })));
            assertThat(observations).hasSingleObservationThat().hasBeenStopped()
                    .hasLowCardinalityKeyValue("outcome", "failed")
                    .hasError(thrown);
        });
    }

    @Test
    void everyInstanceIsObservedUnderItsOwnName() {
        observed().withPropertyValues("inbox.instances.payments.retention=7d", "inbox.instances.orders.name=orders-eu")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean("paymentsSpringInbox", SpringInbox.class).apply("p-1", Content.of(1), tx -> { });
                    context.getBean("ordersInbox", JdbiInbox.class).apply("o-1", Content.of(1), tx -> null);
                    assertThat(observations)
                            .hasNumberOfObservationsWithNameEqualTo("inbox.apply", 2)
                            .hasAnObservation(o -> o.hasLowCardinalityKeyValue("inbox", "payments")
                                    .hasLowCardinalityKeyValue("outcome", "applied"))
                            .hasAnObservation(o -> o.hasLowCardinalityKeyValue("inbox", "orders-eu")
                                    .hasLowCardinalityKeyValue("outcome", "applied"));
                });
    }

    @Test
    void anObserverOfTheApplicationsOwnWins() {
        CallObserver own = (inbox, id) -> CallObserver.NONE.start(inbox, id);
        observed().withBean(CallObserver.class, () -> own).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(InboxObservations.class);
            assertSame(own, context.getBean(JdbiInbox.class).settings().observer());
        });
    }

    @Test
    void withoutAnObservationRegistryTheInboxIsNotObserved() {
        sqlite().run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(InboxObservations.class).doesNotHaveBean(CallContext.class);
            JdbiInbox inbox = context.getBean(JdbiInbox.class);
            assertSame(CallObserver.NONE, inbox.settings().observer());
            assertInstanceOf(Outcome.Applied.class, context.getBean(SpringInbox.class).apply("a-1", Content.of(1),
                    tx -> { }));
        });
    }

    @Test
    void withoutInboxMicrometerTheInboxIsNotObservedAndStillWorks() {
        observed().withClassLoader(new FilteredClassLoader(InboxObservations.class)).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(InboxObservations.class);
            JdbiInbox inbox = context.getBean(JdbiInbox.class);
            assertSame(CallObserver.NONE, inbox.settings().observer());
            assertInstanceOf(Outcome.Applied.class, inbox.apply("a-1", Content.of(1), tx -> null));
            assertEquals(1, inbox.stats().applied());
        });
        assertThat(observations).doesNotHaveAnyObservation();
    }
}
