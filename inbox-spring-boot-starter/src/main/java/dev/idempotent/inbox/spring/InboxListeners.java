package dev.idempotent.inbox.spring;

import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.PurgeReport;
import java.time.Duration;
import java.util.List;

/**
 * The application's listeners as one, in their order: an inbox takes a single listener, and an
 * application may have its own beside the metrics.
 */
final class InboxListeners implements InboxListener {

    private final List<InboxListener> listeners;

    private InboxListeners(List<InboxListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    static InboxListener of(List<InboxListener> listeners) {
        return switch (listeners.size()) {
            case 0 -> InboxListener.NONE;
            case 1 -> listeners.get(0);
            default -> new InboxListeners(listeners);
        };
    }

    @Override
    public void onPhase(String inbox, String id, Phase phase) {
        listeners.forEach(l -> l.onPhase(inbox, id, phase));
    }

    @Override
    public void onOutcome(String inbox, Outcome<?> outcome, Duration took) {
        listeners.forEach(l -> l.onOutcome(inbox, outcome, took));
    }

    @Override
    public void onFailure(String inbox, String id, Throwable failure, Duration took) {
        listeners.forEach(l -> l.onFailure(inbox, id, failure, took));
    }

    @Override
    public void onTimed(String inbox, String id, Duration queued, Duration inTransaction) {
        listeners.forEach(l -> l.onTimed(inbox, id, queued, inTransaction));
    }

    @Override
    public void onGroupCommitted(String inbox, int size) {
        listeners.forEach(l -> l.onGroupCommitted(inbox, size));
    }

    @Override
    public void onPurged(String inbox, PurgeReport report) {
        listeners.forEach(l -> l.onPurged(inbox, report));
    }
}
