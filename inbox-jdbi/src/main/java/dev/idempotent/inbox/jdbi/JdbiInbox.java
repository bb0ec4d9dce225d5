package dev.idempotent.inbox.jdbi;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.ForwardingInbox;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.VoidEffect;
import dev.idempotent.inbox.jdbi.spi.JoinedCalls;
import java.sql.Connection;
import java.time.Instant;
import java.util.Objects;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;

/**
 * An inbox whose effects write through a Jdbi {@link Handle}: the SQLite, PostgreSQL and MariaDB
 * inboxes. Besides {@link #apply}, which runs each message in a transaction of the inbox's own, it
 * applies a message <em>inside a transaction the caller already has open</em>, on a Jdbi handle or
 * on a plain JDBC connection:
 *
 * <pre>{@code
 * jdbi.useTransaction(handle -> {
 *     orders.save(handle, order);                       // the caller's own work
 *     inbox.applyIn(handle, id, Content.of(body), tx -> stock.add(tx, item, qty));
 * });                                                   // one commit: order, stock and the id
 * }</pre>
 *
 * <p>The claim and the effect run in a savepoint of the caller's transaction, one of the call's own:
 * an effect that throws leaves neither the claim nor its writes, the caller's transaction stays
 * usable, and the exception reaches the caller unchanged. Otherwise everything commits or rolls back
 * with the caller's transaction, so an {@link Outcome.Applied} means "applied when your transaction
 * commits". The inbox's counters and listener learn of a joined outcome only after that commit, and
 * of a rolled-back one never. An effect may apply a message of another inbox on the handle it was
 * given: that call is nested in this one's savepoint, and goes with it if this one fails. A rollback
 * to a savepoint of the caller's own reaches the inbox by no callback: a joined outcome inside it is
 * still counted at the commit. The inbox's commit mode does not apply to joined calls: they run on
 * the caller's thread and connection.
 *
 * <p>On MariaDB a deadlock rolls the caller's whole transaction back: the call then throws an
 * {@link dev.idempotent.inbox.InboxBusyException} that says to retry the whole transaction, the
 * transaction's earlier joined outcomes are reported rolled back, and further joined calls on the
 * connection are refused until the caller commits or rolls back.
 *
 * <p>Misuse is refused by name: a handle or connection with no transaction open (autocommit), an
 * effect that commits or rolls back the transaction it was given
 * ({@link dev.idempotent.inbox.EffectBrokeTransactionException}), and a database without the
 * inbox's tables.
 */
public abstract class JdbiInbox extends ForwardingInbox<Handle> {

    private final Jdbi jdbi;
    private final InboxSettings settings;
    private final CallerConnections callerConnections = new CallerConnections();

    /**
     * For the adapters.
     *
     * @param delegate the engine over the adapter's store
     * @param jdbi the Jdbi the inbox writes through
     * @param settings the settings the inbox was built with
     */
    protected JdbiInbox(Inbox<Handle> delegate, Jdbi jdbi, InboxSettings settings) {
        super(delegate);
        this.jdbi = Objects.requireNonNull(jdbi, "jdbi");
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    /**
     * {@return the {@link Jdbi} this inbox writes through}, for reading business tables beside it.
     */
    public Jdbi jdbi() {
        return jdbi;
    }

    /** {@return the settings this inbox was built with} */
    public InboxSettings settings() {
        return settings;
    }

    /**
     * Applies {@code effect} once for {@code id} inside the transaction open on {@code transaction},
     * a Jdbi handle in {@code inTransaction}, {@code useTransaction} or after {@code begin()}. The
     * effect receives that same handle. The outcome is counted, and told to the listener, when Jdbi
     * commits the handle ({@link Handle#afterCommit}); a rollback counts nothing. A commit or
     * rollback made past Jdbi, on the raw connection, is not seen: use {@link #applyIn(Connection,
     * String, Content, Effect)} there.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param transaction a handle with a transaction open; not {@code null}
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param effect the business change, run in the caller's transaction only for a new id
     * @return the outcome, final once the caller's transaction commits
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws InboxException if the handle has no transaction open, or as
     *     {@link Inbox#applyJoined} says
     */
    // Effect extends VoidEffect, so this overload is the more specific (see Effect).
    @SuppressWarnings("overloads")
    public <R, X extends Exception> Outcome<R> applyIn(
            Handle transaction, String id, Content content, Effect<Handle, R, X> effect) throws X {
        return applyIn(transaction, id, content, (Instant) null, effect);
    }

    /**
     * Like {@link #applyIn(Handle, String, Content, Effect)}, for a message that carries its origin
     * time, which {@link Inbox#apply(String, Content, Instant, Effect)} describes.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param transaction a handle with a transaction open; not {@code null}
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param originTime when the sender created the business, by its clock; {@code null} when unknown
     * @param effect the business change, run in the caller's transaction only for a new id
     * @return the outcome, final once the caller's transaction commits
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws InboxException if the handle has no transaction open, or as
     *     {@link Inbox#applyJoined} says ({@link dev.idempotent.inbox.StaleMessageException} among them)
     */
    public <R, X extends Exception> Outcome<R> applyIn(Handle transaction, String id, Content content,
            Instant originTime, Effect<Handle, R, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return joinedIn(transaction, handle -> applyJoined(handle, id, content, originTime, effect));
    }

    /** A joined call on the handle it is given: {@link #applyJoined}, or a result view's. */
    @FunctionalInterface
    interface JoinedCall<R, X extends Exception> {
        PendingOutcome<R> apply(Handle handle) throws X;
    }

    /** The protocol of a joined call on a caller's Jdbi handle, for this class and its result view. */
    <R, X extends Exception> Outcome<R> joinedIn(Handle transaction, JoinedCall<R, X> call) throws X {
        Objects.requireNonNull(transaction, "transaction");
        if (!inTransaction(transaction)) {
            throw new InboxException("the handle has no transaction open; call applyIn inside jdbi.inTransaction(...)"
                    + " or after handle.begin(), or call apply, which opens a transaction of its own");
        }
        JoinedCalls.Tracked<R> pending = JoinedCalls.track(transaction.getConnection(), call.apply(transaction));
        transaction.afterCommit(pending::afterCommit);
        transaction.afterRollback(pending::rolledBack);
        return pending.uncommitted();
    }

    /**
     * Like {@link #applyIn(Handle, String, Content, Effect)}, for an effect that returns nothing.
     *
     * @param <X> the checked exception the effect may throw
     * @param transaction a handle with a transaction open; not {@code null}
     * @param id the business id
     * @param content the content
     * @param effect the business change
     * @return the outcome, final once the caller's transaction commits
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     */
    @SuppressWarnings("overloads")
    public <X extends Exception> Outcome<Void> applyIn(
            Handle transaction, String id, Content content, VoidEffect<Handle, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return applyIn(transaction, id, content, tx -> {
            effect.run(tx);
            return null;
        });
    }

    /**
     * Applies {@code effect} once for {@code id} inside the transaction open on {@code transaction},
     * a JDBC connection with autocommit off. The effect receives a Jdbi handle over that connection
     * (with Jdbi's default configuration), valid while it runs. The inbox cannot see your commit,
     * so the result says so in its type: call {@link PendingOutcome#committed()} after your commit,
     * which counts the outcome and returns it for the acknowledgement, or
     * {@link PendingOutcome#rolledBack()} after a rollback. Report it right after your commit or
     * rollback: an outcome undone before (with a joined call it was nested in, or with a transaction
     * the database rolled back under a later joined call on the connection) refuses
     * {@code committed()} with an {@link IllegalStateException}.
     *
     * <pre>{@code
     * connection.setAutoCommit(false);
     * PendingOutcome<Integer> pending = inbox.applyIn(connection, id, Content.of(qty),
     *         tx -> tx.execute("UPDATE stock SET total = total + ?", qty));
     * connection.commit();
     * acknowledge(pending.committed());
     * }</pre>
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param transaction a connection with autocommit off; not {@code null}; left open
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param effect the business change, run in the caller's transaction only for a new id
     * @return the outcome, pending the caller's commit
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws InboxException if the connection is in autocommit mode, or as
     *     {@link Inbox#applyJoined} says
     */
    @SuppressWarnings("overloads")
    public <R, X extends Exception> PendingOutcome<R> applyIn(
            Connection transaction, String id, Content content, Effect<Handle, R, X> effect) throws X {
        return applyIn(transaction, id, content, (Instant) null, effect);
    }

    /**
     * Like {@link #applyIn(Connection, String, Content, Effect)}, for a message that carries its
     * origin time, which {@link Inbox#apply(String, Content, Instant, Effect)} describes.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param transaction a connection with autocommit off; not {@code null}; left open
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param originTime when the sender created the business, by its clock; {@code null} when unknown
     * @param effect the business change, run in the caller's transaction only for a new id
     * @return the outcome, pending the caller's commit
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws InboxException if the connection is in autocommit mode, or as
     *     {@link Inbox#applyJoined} says ({@link dev.idempotent.inbox.StaleMessageException} among them)
     */
    public <R, X extends Exception> PendingOutcome<R> applyIn(Connection transaction, String id, Content content,
            Instant originTime, Effect<Handle, R, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return joinedIn(transaction, handle -> applyJoined(handle, id, content, originTime, effect));
    }

    /** The protocol of a joined call on a caller's JDBC connection, for this class and its result view. */
    <R, X extends Exception> PendingOutcome<R> joinedIn(Connection transaction, JoinedCall<R, X> call) throws X {
        Objects.requireNonNull(transaction, "transaction");
        Handle handle = callerConnections.open(transaction);
        try {
            return JoinedCalls.track(transaction, call.apply(handle));
        } finally {
            try {
                handle.close();
            } catch (JdbiException ignored) {
                // Closing the wrapper releases its statements only; the connection is the caller's.
            }
        }
    }

    /**
     * Like {@link #applyIn(Connection, String, Content, Effect)}, for an effect that returns nothing.
     *
     * @param <X> the checked exception the effect may throw
     * @param transaction a connection with autocommit off; not {@code null}; left open
     * @param id the business id
     * @param content the content
     * @param effect the business change
     * @return the outcome, pending the caller's commit
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     */
    @SuppressWarnings("overloads")
    public <X extends Exception> PendingOutcome<Void> applyIn(
            Connection transaction, String id, Content content, VoidEffect<Handle, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return applyIn(transaction, id, content, tx -> {
            effect.run(tx);
            return null;
        });
    }

    /**
     * A view of this inbox that stores each effect's result with its record, with the joining
     * forms {@code applyIn} beside {@code apply}; see {@link JdbiResultInbox} and
     * {@link Inbox#storingResults}.
     *
     * @param <R> the result type
     * @param codec how results are stored and read; not {@code null}
     * @return the view
     * @throws IllegalArgumentException if the codec's type name or version is out of range
     */
    @Beta
    @Override
    public <R> JdbiResultInbox<R> storingResults(ResultCodec<R> codec) {
        return new JdbiResultInbox<>(this, super.storingResults(codec));
    }

    private static boolean inTransaction(Handle handle) {
        try {
            return handle.isInTransaction();
        } catch (JdbiException e) {
            throw new InboxException("the handle's transaction state could not be read: " + e.getMessage(), e);
        }
    }
}
