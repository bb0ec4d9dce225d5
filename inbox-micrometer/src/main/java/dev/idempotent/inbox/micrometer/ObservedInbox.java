package dev.idempotent.inbox.micrometer;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.ForwardingInbox;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.StaleMessageException;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Instant;
import java.util.Objects;

/**
 * An inbox whose every {@code apply} runs inside an {@link Observation}: started on the caller's
 * thread, so its parent is whatever observation the caller has open, and current (in scope) while
 * the inbox captures the caller's context, so that {@link PropagatedCallContext} carries it to the
 * effect even when another caller's thread runs it under group commit. It stops when {@code apply}
 * returns, after the commit, with the outcome as a key; a call that throws records its exception
 * as the observation's error, except a {@link StaleMessageException}, a normal refusal like a
 * conflict, which only its outcome {@code stale} tells. Micrometer Tracing and the OpenTelemetry bridge turn it into a span,
 * a meter handler into the timer {@code inbox.apply}, with no code of theirs here.
 *
 * <p>{@code applyAll}, {@code find}, {@code retention} and {@code stats} are passed through
 * unobserved. Closing this closes the inbox it wraps.
 *
 * @param <H> the transaction handle effects receive
 */
@Beta
public final class ObservedInbox<H> extends ForwardingInbox<H> {

    private final ObservationRegistry registry;
    private final InboxObservationConvention convention;

    private ObservedInbox(Inbox<H> inbox, ObservationRegistry registry, InboxObservationConvention convention) {
        super(inbox);
        this.registry = Objects.requireNonNull(registry, "registry");
        this.convention = convention;
    }

    /**
     * Observes {@code inbox} with {@link DefaultInboxObservationConvention}.
     *
     * @param <H> the transaction handle effects receive
     * @param inbox the inbox every call goes to; not {@code null}
     * @param registry where observations are made; not {@code null}
     *     ({@link ObservationRegistry#NOOP} for none)
     * @return the observed inbox
     */
    public static <H> ObservedInbox<H> of(Inbox<H> inbox, ObservationRegistry registry) {
        return new ObservedInbox<>(inbox, registry, null);
    }

    /**
     * Observes {@code inbox} with {@code convention} instead of the default one (a global
     * convention registered with the registry still wins over it).
     *
     * @param <H> the transaction handle effects receive
     * @param inbox the inbox every call goes to; not {@code null}
     * @param registry where observations are made; not {@code null}
     * @param convention names and keys the observations; not {@code null}
     * @return the observed inbox
     */
    public static <H> ObservedInbox<H> of(Inbox<H> inbox, ObservationRegistry registry,
            InboxObservationConvention convention) {
        return new ObservedInbox<>(inbox, registry, Objects.requireNonNull(convention, "convention"));
    }

    /**
     * Behaves as {@link Inbox#apply(String, Content, Instant, Effect)}, observed.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param id the business id
     * @param content the content
     * @param originTime the origin time, or {@code null} when unknown
     * @param effect the business change
     * @return the outcome, after its commit
     * @throws X the effect's own exception, unchanged
     */
    @Override
    public <R, X extends Exception> Outcome<R> apply(
            String id, Content content, Instant originTime, Effect<H, R, X> effect) throws X {
        InboxObservationContext context = new InboxObservationContext(name(), id);
        Observation observation = Observation.createNotStarted(
                convention, DefaultInboxObservationConvention.INSTANCE, () -> context, registry).start();
        try {
            Outcome<R> outcome;
            try (Observation.Scope scope = observation.openScope()) {
                outcome = super.apply(id, content, originTime, effect);
            }
            context.outcome(Outcomes.of(outcome));
            return outcome;
        } catch (Exception | Error failure) {
            context.outcome(Outcomes.of(failure));
            // A stale message is a normal refusal, like a conflict: its outcome says it, and a trace
            // full of error spans for it would hide the real ones.
            if (!(failure instanceof StaleMessageException)) {
                observation.error(failure);
            }
            throw failure;
        } finally {
            observation.stop();
        }
    }
}
