package dev.idempotent.inbox.testkit;

import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.Phase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A listener that writes down every call it receives as a line, in order. */
public final class RecordingListener implements InboxListener {

    private final List<String> events = new ArrayList<>();

    @Override
    public synchronized void onPhase(String inbox, String id, Phase phase) {
        events.add(phase + " " + id);
    }

    @Override
    public synchronized void onOutcome(String inbox, Outcome<?> outcome, Duration took) {
        events.add(outcome.getClass().getSimpleName().toUpperCase() + " " + outcome.id());
    }

    @Override
    public synchronized void onFailure(String inbox, String id, Throwable failure, Duration took) {
        events.add("FAILURE " + id + " " + failure.getClass().getSimpleName());
    }

    /** {@return the lines so far}, for example {@code RECORDED snack-7}, {@code APPLIED snack-7}. */
    public synchronized List<String> events() {
        return List.copyOf(events);
    }
}
