package dev.idempotent.inbox.micrometer;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.CallContext;
import dev.idempotent.inbox.CallObserver;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.StaleMessageException;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;

/**
 * Makes every {@code apply} and {@code applyJoined} of an inbox an {@link Observation}: give it to
 * the builder, {@code SqliteInbox.builder(file).observer(InboxObservations.of(registry))}.
 * Micrometer Tracing and its OpenTelemetry bridge turn each observation into a span, a meter
 * handler into the timer {@code inbox.apply}, with no code of theirs here.
 *
 * <p>The observation is started on the caller's thread, so its parent is whatever observation the
 * caller has open, and it is current (in scope) for the whole call: the inbox captures its
 * {@link CallContext} inside that scope, so that {@link PropagatedCallContext} carries it to the
 * effect even when another caller's thread runs it under group commit. It stops when the outcome
 * is final, with the outcome as its {@code outcome} key:
 *
 * <ul>
 *   <li>{@code apply}: after the commit, before the call returns;
 *   <li>{@code applyJoined} (Jdbi's {@code applyIn}, {@code SpringInbox}): only when the caller's
 *       commit is reported through {@code PendingOutcome.committed()}, or its rollback through
 *       {@code rolledBack()}, which stops it with the outcome {@code rolled_back}. The Jdbi handle
 *       form and {@code SpringInbox} report both themselves; a caller of the connection form must,
 *       or its observation never stops;
 *   <li>a call that throws: at once, with its exception as the observation's error, except a
 *       {@link StaleMessageException}, a normal refusal like a conflict, which only its outcome
 *       {@code stale} tells.
 * </ul>
 *
 * <p>{@code applyAll} is not observed. Thread-safe.
 */
@Beta
public final class InboxObservations implements CallObserver {

    private final ObservationRegistry registry;
    private final InboxObservationConvention convention;

    private InboxObservations(ObservationRegistry registry, InboxObservationConvention convention) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.convention = convention;
    }

    /**
     * Observes with {@link DefaultInboxObservationConvention}.
     *
     * @param registry where observations are made; not {@code null}
     *     ({@link ObservationRegistry#NOOP} for none)
     * @return the observer, for {@link InboxBuilder#observer(CallObserver)}
     */
    public static InboxObservations of(ObservationRegistry registry) {
        return new InboxObservations(registry, null);
    }

    /**
     * Observes with {@code convention} instead of the default one (a global convention registered
     * with the registry still wins over it).
     *
     * @param registry where observations are made; not {@code null}
     * @param convention names and keys the observations; not {@code null}
     * @return the observer, for {@link InboxBuilder#observer(CallObserver)}
     */
    public static InboxObservations of(ObservationRegistry registry, InboxObservationConvention convention) {
        return new InboxObservations(registry, Objects.requireNonNull(convention, "convention"));
    }

    /**
     * Starts the observation of one call, on the caller's thread.
     *
     * @param inbox the inbox's name
     * @param id the business id as given; may be {@code null}
     * @return the call's observation
     */
    @Override
    public Observed start(String inbox, String id) {
        InboxObservationContext context = new InboxObservationContext(inbox, id);
        Observation observation = Observation.createNotStarted(
                convention, DefaultInboxObservationConvention.INSTANCE, () -> context, registry).start();
        return new Call(observation, context);
    }

    private record Call(Observation observation, InboxObservationContext context) implements Observed {

        @Override
        public CallContext.Scope open() {
            Observation.Scope scope = observation.openScope();
            return scope::close;
        }

        @Override
        public void finished(Outcome<?> outcome) {
            stop(Outcomes.of(outcome));
        }

        @Override
        public void failed(Throwable failure) {
            // A stale message is a normal refusal, like a conflict: its outcome says it, and a trace
            // full of error spans for it would hide the real ones.
            if (!(failure instanceof StaleMessageException)) {
                observation.error(failure);
            }
            stop(Outcomes.of(failure));
        }

        @Override
        public void rolledBack() {
            stop(Outcomes.ROLLED_BACK);
        }

        private void stop(String outcome) {
            context.outcome(outcome);
            observation.stop();
        }
    }

    @Override
    public String toString() {
        return "InboxObservations[" + registry + "]";
    }
}
