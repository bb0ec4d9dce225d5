package dev.idempotent.inbox.micrometer;

import dev.idempotent.inbox.Beta;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the observation of an {@code apply}. Implement it to replace
 * {@link DefaultInboxObservationConvention} (give yours to {@link InboxObservations#of(
 * io.micrometer.observation.ObservationRegistry, InboxObservationConvention)}), or register a
 * global one of this type with the {@code ObservationRegistry}, which then wins over both.
 */
@Beta
public interface InboxObservationConvention extends ObservationConvention<InboxObservationContext> {

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof InboxObservationContext;
    }
}
