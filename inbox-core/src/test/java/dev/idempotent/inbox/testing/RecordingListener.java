package dev.idempotent.inbox.testing;

import dev.idempotent.inbox.InboxListener;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.Phase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A listener that writes down every call as a line, with the database's state at that moment, so
 * a test can tell whether a call came inside the transaction, after its commit or after its
 * rollback: for example {@code RECORDED a open commits=0 rollbacks=0}.
 */
public final class RecordingListener implements InboxListener {

    private final InMemoryDatabase database;
    private final List<String> events = new ArrayList<>();
    private final List<Throwable> failures = new ArrayList<>();

    public RecordingListener(InMemoryDatabase database) {
        this.database = database;
    }

    @Override
    public synchronized void onPhase(String inbox, String id, Phase phase) {
        events.add(phase + " " + id + " " + state());
    }

    @Override
    public synchronized void onOutcome(String inbox, Outcome<?> outcome, Duration took) {
        events.add(outcome.getClass().getSimpleName().toUpperCase() + " " + outcome.id() + " " + state());
    }

    @Override
    public synchronized void onFailure(String inbox, String id, Throwable failure, Duration took) {
        events.add("FAILURE " + id + " " + failure.getClass().getSimpleName() + " " + state());
        failures.add(failure);
    }

    private String state() {
        return (database.openTransactions() > 0 ? "open" : "closed")
                + " commits=" + database.commits() + " rollbacks=" + database.rollbacks();
    }

    /** The lines so far, in order. */
    public synchronized List<String> events() {
        return List.copyOf(events);
    }

    /** The failures {@link #onFailure} received, in order. */
    public synchronized List<Throwable> failures() {
        return List.copyOf(failures);
    }
}
