package dev.idempotent.inbox;

/**
 * How an inbox turns concurrent calls into transactions.
 *
 * <p>Each adapter has a default (SQLite {@link #GROUP}, PostgreSQL {@link #PER_CALLER}); choose
 * the other with {@link InboxBuilder#commitMode(CommitMode)}. Both keep every guarantee of
 * {@link Inbox#apply}; they differ in where an effect runs and in what a commit costs.
 */
@Beta
public enum CommitMode {

    /**
     * Concurrent callers of this process queue in arrival order; one of them at a time leads,
     * runs the oldest queued messages (up to {@link InboxSettings#maxGroupSize()}) in one
     * transaction, each in a savepoint of its own, and commits once for all of them. One commit,
     * one disk sync, serves many callers. An effect may therefore run on another caller's thread:
     * the caller's {@link CallContext} (its MDC, by default) is put in place around it, but other
     * thread-bound state is not there.
     */
    GROUP,

    /**
     * Every caller runs its own message, on its own thread, in a transaction of its own. On a
     * database that admits one writer at a time (SQLite) callers still take turns, in arrival
     * order, and each pays a commit of its own; on one with concurrent writers (PostgreSQL) they
     * run in parallel. For frameworks that bind state to the thread (a transaction manager, a
     * tracing span without context propagation).
     */
    PER_CALLER
}
