package dev.idempotent.inbox.micrometer;

import dev.idempotent.inbox.Beta;
import io.micrometer.common.KeyValues;

/**
 * The observation {@code inbox.apply}, with the low-cardinality keys {@code inbox} (the inbox's
 * name) and, once the call ended, {@code outcome}; the message id only as the high-cardinality key
 * {@code message.id}, which tracing puts on the span and meters never see. With a meter handler on
 * the registry this gives the timer {@code inbox.apply} tagged {@code inbox}, {@code outcome} and
 * {@code error}, and the long task timer {@code inbox.apply.active} tagged {@code inbox}.
 */
@Beta
public class DefaultInboxObservationConvention implements InboxObservationConvention {

    /** The shared instance. */
    public static final DefaultInboxObservationConvention INSTANCE = new DefaultInboxObservationConvention();

    /** The name of the observation, and of the timer a meter handler records for it. */
    public static final String NAME = "inbox.apply";

    /** For subclasses that change some of the keys; otherwise use {@link #INSTANCE}. */
    protected DefaultInboxObservationConvention() {}

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(InboxObservationContext context) {
        return "inbox apply " + context.inbox();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(InboxObservationContext context) {
        // The outcome is known only at the stop; a key that is missing until then keeps the
        // long task timer of running calls from showing a made-up outcome.
        KeyValues keys = KeyValues.of("inbox", context.inbox());
        return context.outcome() == null ? keys : keys.and("outcome", context.outcome());
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(InboxObservationContext context) {
        return context.messageId() == null ? KeyValues.empty() : KeyValues.of("message.id", context.messageId());
    }
}
