package dev.idempotent.inbox.jdbi.spi;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.EffectBrokeTransactionException;
import java.sql.SQLException;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.transaction.TransactionHandler;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;

/**
 * Refuses, while an effect runs, the Jdbi calls that would end or replace the transaction it was
 * given: {@code begin}, {@code commit}, {@code rollback} and a new {@code inTransaction} on its
 * handle. Without it, Jdbi silently ignores a {@code commit()} or {@code rollback()} on a handle it
 * did not begin a transaction on (the SQLite writer's), so an effect that rolled back "its" work
 * would see it committed; or it really commits the inbox's transaction (PostgreSQL), after which
 * the claim no longer guards what follows. The refusal is thrown inside the effect, and recorded,
 * so an effect that catches it is still reported when it returns.
 *
 * <p>A store {@link #install installs} the guard on the {@link Jdbi} it opens handles from, then
 * brackets each effect with {@link #enter} and {@link #exit()} on the thread that runs it.
 * Statements and savepoints of the effect's own pass untouched.
 */
@Beta
public final class EffectGuard {

    private static final ThreadLocal<EffectGuard> current = new ThreadLocal<>();

    private final Handle handle;
    private final EffectGuard enclosing;
    private boolean attempted;

    private EffectGuard(Handle handle, EffectGuard enclosing) {
        this.handle = handle;
        this.enclosing = enclosing;
    }

    /**
     * Wraps {@code jdbi}'s transaction handler in the guard, once: handles opened from it afterwards
     * are guarded while an effect runs on them, and behave as before otherwise.
     *
     * @param jdbi the Jdbi a store opens its handles from
     * @return {@code jdbi}
     */
    public static Jdbi install(Jdbi jdbi) {
        TransactionHandler handler = jdbi.getTransactionHandler();
        if (!(handler instanceof Guarding)) {
            jdbi.setTransactionHandler(new Guarding(handler));
        }
        return jdbi;
    }

    /**
     * Marks {@code handle} as given to an effect on this thread, until {@link #exit()}.
     *
     * @param handle the handle the effect receives
     * @return the guard, to exit when the effect has returned or thrown
     */
    public static EffectGuard enter(Handle handle) {
        EffectGuard guard = new EffectGuard(handle, current.get());
        current.set(guard);
        return guard;
    }

    /**
     * Ends the guard.
     *
     * @return whether the effect tried to begin, commit or roll back its transaction, even if it
     *     caught the refusal
     */
    public boolean exit() {
        if (current.get() == this) {
            // set, not remove, even to null: a removal clears a weak reference through native code.
            current.set(enclosing);
        }
        return attempted;
    }

    private static void refuseIfGuarded(Handle handle, String what) {
        for (EffectGuard guard = current.get(); guard != null; guard = guard.enclosing) {
            if (guard.handle == handle) {
                guard.attempted = true;
                throw new EffectBrokeTransactionException("the effect tried to " + what + " the transaction it"
                        + " was given; an effect runs inside a transaction the inbox (or, for a joined call, its"
                        + " caller) ends, after the claim and the effect's writes are both in it. To undo the"
                        + " effect's writes, throw from the effect; to commit, return", null);
            }
        }
    }

    /** The wrapped handler; each handle gets its own, wrapping the one Jdbi made for it. */
    private static final class Guarding implements TransactionHandler {

        private final TransactionHandler delegate;

        Guarding(TransactionHandler delegate) {
            this.delegate = delegate;
        }

        @Override
        public TransactionHandler specialize(Handle handle) throws SQLException {
            return new Guarding(delegate.specialize(handle));
        }

        @Override
        public void begin(Handle handle) {
            refuseIfGuarded(handle, "begin");
            delegate.begin(handle);
        }

        @Override
        public void commit(Handle handle) {
            refuseIfGuarded(handle, "commit");
            delegate.commit(handle);
        }

        @Override
        public void rollback(Handle handle) {
            refuseIfGuarded(handle, "roll back");
            delegate.rollback(handle);
        }

        @Override
        public boolean isInTransaction(Handle handle) {
            return delegate.isInTransaction(handle);
        }

        @Override
        public void savepoint(Handle handle, String savepointName) {
            delegate.savepoint(handle, savepointName);
        }

        @Override
        public void rollbackToSavepoint(Handle handle, String savepointName) {
            delegate.rollbackToSavepoint(handle, savepointName);
        }

        @Override
        public void releaseSavepoint(Handle handle, String savepointName) {
            delegate.releaseSavepoint(handle, savepointName);
        }

        @Override
        public <R, X extends Exception> R inTransaction(Handle handle, HandleCallback<R, X> callback) throws X {
            if (!delegate.isInTransaction(handle)) {
                refuseIfGuarded(handle, "begin");
            }
            return delegate.inTransaction(handle, callback);
        }

        @Override
        public <R, X extends Exception> R inTransaction(
                Handle handle, TransactionIsolationLevel level, HandleCallback<R, X> callback) throws X {
            if (!delegate.isInTransaction(handle)) {
                refuseIfGuarded(handle, "begin");
            }
            return delegate.inTransaction(handle, level, callback);
        }
    }
}
