package dev.idempotent.inbox.jdbi.spi;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import java.lang.ref.WeakReference;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * What the joined calls on one connection know of each other, so that a joined outcome is counted
 * only when the caller's transaction commits with it. A call made from inside another's effect
 * (the same connection, the same thread) is nested in that call's savepoint: when that savepoint is
 * rolled back, the nested call's outcome goes with it. When the database rolls the caller's whole
 * transaction back under a joined call (a MariaDB deadlock), every outcome on the connection not
 * yet reported goes with it, and later joined calls on it are refused until the caller has ended
 * that transaction.
 *
 * <p>{@link JoinedTransaction} opens and closes the calls; {@link #track} is for the inbox that
 * hands the outcome to the caller.
 */
@Beta
public final class JoinedCalls {

    private static final ThreadLocal<Call> innermost = new ThreadLocal<>();
    // The outcomes nested in the outermost call on a connection that just succeeded, for that call's
    // own outcome to take along (see track): its caller reports it, and so them.
    private static final ThreadLocal<Call> lastKept = new ThreadLocal<>();
    // Outcomes returned and not yet reported committed or rolled back, by connection; weakly, since
    // a caller may drop a pending outcome without reporting it.
    private static final Map<Connection, List<WeakReference<Tracked<?>>>> unreported =
            Collections.synchronizedMap(new WeakHashMap<>());
    private static final Map<Connection, Boolean> lost = Collections.synchronizedMap(new WeakHashMap<>());

    private JoinedCalls() {}

    /** One joined call open on a connection, between its savepoint and that savepoint's end. */
    static final class Call {
        private final Connection connection;
        private final Call enclosing;
        private final List<Tracked<?>> nested = new ArrayList<>();
        private boolean closed;

        private Call(Connection connection, Call enclosing) {
            this.connection = connection;
            this.enclosing = enclosing;
        }

        /** Ends the call; the outcomes nested in it go to the enclosing call, or with it if {@code kept} is false. */
        void close(boolean kept) {
            if (closed) {
                return;
            }
            closed = true;
            if (innermost.get() == this) {
                // set, not remove, even to null: a removal clears a weak reference through native code.
                innermost.set(enclosing);
            }
            if (!kept) {
                nested.forEach(Tracked::undo);
                nested.clear();
            } else if (innermostOn(connection) != null) {
                nested.forEach(tracked -> adopt(connection, tracked));
                nested.clear();
            } else {
                lastKept.set(this);
            }
        }
    }

    /** Opens a call on {@code connection}, nested in the innermost call open on it on this thread, if any. */
    static Call open(Connection connection) {
        if (innermostOn(connection) == null) {
            // An outermost call: what an earlier one left for an outcome nobody tracked is stale.
            lastKept.set(null);
        }
        Call call = new Call(connection, innermost.get());
        innermost.set(call);
        return call;
    }

    private static Call innermostOn(Connection connection) {
        for (Call call = innermost.get(); call != null; call = call.enclosing) {
            if (call.connection == connection) {
                return call;
            }
        }
        return null;
    }

    private static void adopt(Connection connection, Tracked<?> tracked) {
        Call enclosing = innermostOn(connection);
        if (enclosing != null) {
            enclosing.nested.add(tracked);
            return;
        }
        synchronized (unreported) {
            List<WeakReference<Tracked<?>>> list = unreported.computeIfAbsent(connection, c -> new ArrayList<>());
            list.removeIf(ref -> ref.get() == null || ref.get().isFinal());
            list.add(new WeakReference<>(tracked));
        }
    }

    /**
     * Keeps {@code pending}, the outcome of a joined call on {@code connection} that has just
     * returned, with the call it is nested in, if any, so that it goes where that call goes.
     *
     * @param <R> what the effect returned
     * @param connection the caller's connection
     * @param pending the call's outcome
     * @return the outcome to hand to the caller, or to report through the caller's commit
     */
    public static <R> Tracked<R> track(Connection connection, PendingOutcome<R> pending) {
        Tracked<R> tracked = new Tracked<>(pending);
        Call kept = lastKept.get();
        if (kept != null) {
            lastKept.set(null);
            if (kept.connection == connection) {
                // A call nested through the effect's handle reports with this one: under the
                // connection form nothing else would report it.
                tracked.nested.addAll(kept.nested);
            }
        }
        adopt(connection, tracked);
        return tracked;
    }

    /**
     * Records that the database rolled back the caller's whole transaction on {@code connection}
     * under a joined call: the outcomes of the calls open on it and of those not yet reported go
     * with it, and {@link #isLost} answers true until {@link #found}.
     */
    static void transactionLost(Connection connection) {
        lost.put(connection, Boolean.TRUE);
        for (Call call = innermost.get(); call != null; call = call.enclosing) {
            if (call.connection == connection) {
                call.nested.forEach(Tracked::undo);
                call.nested.clear();
            }
        }
        List<WeakReference<Tracked<?>>> list;
        synchronized (unreported) {
            list = unreported.remove(connection);
        }
        if (list != null) {
            for (WeakReference<Tracked<?>> ref : list) {
                Tracked<?> tracked = ref.get();
                if (tracked != null) {
                    tracked.undo();
                }
            }
        }
    }

    /** Whether a joined call on {@code connection} lost the caller's transaction, and nobody has since seen it ended. */
    static boolean isLost(Connection connection) {
        return lost.containsKey(connection);
    }

    /** Records that the transaction lost on {@code connection} has ended. */
    static void found(Connection connection) {
        lost.remove(connection);
    }

    /**
     * A joined call's outcome as handed to the caller: reported committed or rolled back by the
     * caller (or through Jdbi's callbacks), or undone with the savepoint or transaction it was in.
     *
     * @param <R> what the effect returned
     */
    public static final class Tracked<R> implements PendingOutcome<R> {

        private enum State { OPEN, COMMITTED, ROLLED_BACK, UNDONE }

        private final PendingOutcome<R> pending;
        private final List<Tracked<?>> nested = new ArrayList<>();
        private State state = State.OPEN;

        private Tracked(PendingOutcome<R> pending) {
            this.pending = pending;
        }

        private synchronized boolean isFinal() {
            return state != State.OPEN;
        }

        private synchronized void undo() {
            if (state == State.OPEN) {
                state = State.UNDONE;
                pending.rolledBack();
                nested.forEach(Tracked::undo);
            }
        }

        @Override
        public String id() {
            return pending.id();
        }

        @Override
        public Outcome<R> uncommitted() {
            return pending.uncommitted();
        }

        @Override
        public synchronized Outcome<R> committed() {
            if (state == State.UNDONE) {
                throw new IllegalStateException("id '" + id() + "' was rolled back with the joined call it was"
                        + " nested in, or with the whole transaction; its outcome never became final");
            }
            Outcome<R> outcome = pending.committed();
            state = State.COMMITTED;
            nested.forEach(Tracked::afterCommit);
            return outcome;
        }

        @Override
        public synchronized void rolledBack() {
            pending.rolledBack();
            if (state == State.OPEN) {
                state = State.ROLLED_BACK;
            }
            nested.forEach(Tracked::rolledBack);
        }

        /**
         * For a commit callback (Jdbi's, or an enclosing call's report): counts the outcome, unless it
         * was undone or reported rolled back before.
         */
        public synchronized void afterCommit() {
            if (state == State.OPEN || state == State.COMMITTED) {
                committed();
            }
        }

        @Override
        public String toString() {
            return state == State.UNDONE ? "PendingOutcome[" + pending.uncommitted() + ", undone]" : pending.toString();
        }
    }
}
