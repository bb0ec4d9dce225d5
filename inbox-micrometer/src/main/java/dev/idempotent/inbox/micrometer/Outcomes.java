package dev.idempotent.inbox.micrometer;

import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.StaleMessageException;
import java.util.List;

/** The values of the {@code outcome} tag and key: one per way a call can end, and nothing else. */
final class Outcomes {

    static final String APPLIED = "applied";
    static final String DUPLICATE = "duplicate";
    static final String CONFLICT = "conflict";
    static final String STALE = "stale";
    static final String BUSY = "busy";
    static final String UNKNOWN = "unknown";
    static final String INVALID = "invalid";
    static final String FAILED = "failed";
    /**
     * A joined call whose caller's transaction rolled back: an observation's outcome only. The
     * meters count nothing for it, as the inbox's listener hears nothing of it.
     */
    static final String ROLLED_BACK = "rolled_back";

    /** Every value a meter counts, in the order of {@link #index}. */
    static final List<String> ALL = List.of(APPLIED, DUPLICATE, CONFLICT, STALE, BUSY, UNKNOWN, INVALID, FAILED);

    private Outcomes() {}

    static String of(Outcome<?> outcome) {
        return outcome.fold(applied -> APPLIED, duplicate -> DUPLICATE, conflict -> CONFLICT);
    }

    /**
     * The outcome of a call that threw {@code failure}: {@code unknown} only where the commit's
     * result is unknown, so a dashboard can tell "may be applied" from "certainly not".
     */
    static String of(Throwable failure) {
        if (failure instanceof StaleMessageException) {
            return STALE;
        }
        if (failure instanceof InboxBusyException) {
            return BUSY;
        }
        if (failure instanceof OutcomeUnknownException) {
            return UNKNOWN;
        }
        if (failure instanceof InvalidMessageException) {
            return INVALID;
        }
        return FAILED;
    }

    static int index(String outcome) {
        return ALL.indexOf(outcome);
    }
}
