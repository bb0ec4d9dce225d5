package dev.idempotent.inbox.internal;

import dev.idempotent.inbox.InboxStats;
import java.util.concurrent.atomic.LongAdder;

/** The counters behind {@link InboxStats}; each call ends in exactly one of them. */
public final class CallCounters {

    private final LongAdder applied = new LongAdder();
    private final LongAdder duplicates = new LongAdder();
    private final LongAdder conflicts = new LongAdder();
    private final LongAdder invalid = new LongAdder();
    private final LongAdder stale = new LongAdder();
    private final LongAdder busy = new LongAdder();
    private final LongAdder failed = new LongAdder();

    public void applied() {
        applied.increment();
    }

    public void duplicate() {
        duplicates.increment();
    }

    public void conflict() {
        conflicts.increment();
    }

    public void invalid() {
        invalid.increment();
    }

    public void stale() {
        stale.increment();
    }

    public void busy() {
        busy.increment();
    }

    public void failed() {
        failed.increment();
    }

    public InboxStats snapshot() {
        return new InboxStats(
                applied.sum(), duplicates.sum(), conflicts.sum(), invalid.sum(), stale.sum(), busy.sum(), failed.sum());
    }
}
