package dev.idempotent.inbox.spring;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.ResultCodec;
import dev.idempotent.inbox.VoidEffect;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Objects;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.ClassUtils;

/**
 * The inbox in a Spring application: {@link #apply} runs in the Spring-managed transaction of the
 * calling thread ({@code @Transactional}, a {@code TransactionTemplate}), so that the effect's
 * writes through {@code JdbcClient}, {@code JdbcTemplate} or a Spring Data JPA repository commit or
 * roll back together with the inbox's record of the id.
 *
 * <pre>{@code
 * @Transactional
 * public void receive(Receipt receipt) {
 *     Outcome<Integer> outcome = inbox.apply(receipt.id(), Content.of(receipt.qty()),
 *             tx -> jdbc.sql("UPDATE stock SET total = total + ?").param(receipt.qty()).update());
 *     ...
 * }
 * }</pre>
 *
 * <ul>
 *   <li>Inside a transaction, the call joins it on the transaction's connection
 *       ({@link DataSourceUtils#getConnection}), through {@link JdbiInbox#applyIn(Connection,
 *       String, Content, Effect)}: the claim and the effect run in a savepoint; if the effect
 *       throws, neither remains in the database and the exception reaches the caller unchanged
 *       (and, thrown out of a {@code @Transactional} method, rolls the transaction back). The
 *       outcome returned is the one decided in the transaction: an {@link Outcome.Applied} holds
 *       once it commits.
 *   <li>Outside one, it opens a transaction of its own through the application's transaction
 *       manager and joins that, so the effect's writes are the same either way; the outcome
 *       returned is final. Without a transaction manager it calls {@link JdbiInbox#apply}, whose
 *       effect must write through the {@link Handle} it is given.
 * </ul>
 *
 * <p>Under a JDBC transaction manager ({@code DataSourceTransactionManager},
 * {@code JdbcTransactionManager}) the caller's transaction stays usable after an effect that
 * threw: the caller may catch the exception and commit the rest of its work. Under a
 * {@code JpaTransactionManager} it does not: Hibernate's persistence context is not covered by a
 * savepoint, so the entities a failed effect saved or changed would still be written at the next
 * flush. A failed effect therefore marks the JPA transaction rollback-only; the commit is refused
 * ({@code UnexpectedRollbackException}) and nothing of the transaction remains. Before its
 * savepoint, the call flushes the transaction's persistence context, so that the caller's own
 * pending writes are never inside it (a flush that fails throws Spring's
 * {@code DataAccessException}, before the message is claimed). A JPA repository's writes made by
 * the effect are flushed at commit unless the effect flushes them ({@code saveAndFlush}); either
 * way they commit or roll back with the claim, but only a flushed write fails inside the effect.
 *
 * <p>The inbox's {@code stats()} and listener (its metrics) count a joined outcome in the
 * transaction's {@code afterCommit}, and a rolled-back one never; nor a call made inside the
 * effect of another joined call that failed, whose savepoint took it along. A rollback to a
 * savepoint of the caller's own ({@code Propagation.NESTED}) is not told to the inbox: an outcome
 * decided inside such a nested transaction that rolls back is counted when the outer transaction
 * commits, though its claim is gone (the database is right; the count is not).
 *
 * <p>The transaction must be one that a transaction manager of the inbox's data source began: the
 * data source, or the target of a {@code TransactionAwareDataSourceProxy} around it, bound to the
 * thread with a transaction on its connection. A transaction of another data source is refused
 * with an {@link InboxException} before the message is claimed, whatever the autocommit setting of
 * the pools, for the inbox's record could not commit with the effect's writes there; so is a
 * read-only transaction. Thread-safe.
 */
public final class SpringInbox {

    /** Whether Spring's JPA support and the JPA API are on the class path, read without loading either. */
    static final boolean JPA_PRESENT = ClassUtils.isPresent("org.springframework.orm.jpa.EntityManagerHolder",
            SpringInbox.class.getClassLoader())
            && ClassUtils.isPresent("jakarta.persistence.EntityManager", SpringInbox.class.getClassLoader());

    private final JdbiInbox inbox;
    private final DataSource transactionKey;
    private final TransactionTemplate ownTransactions;

    /**
     * An inbox joining the Spring-managed transactions over {@code dataSource}.
     *
     * @param inbox the inbox, working in {@code dataSource}'s database; not {@code null}
     * @param dataSource the data source whose transactions to join; not {@code null}
     * @param ownTransactions opens a transaction when the caller has none, or {@code null} to call
     *     {@link JdbiInbox#apply} then
     */
    public SpringInbox(JdbiInbox inbox, DataSource dataSource, TransactionTemplate ownTransactions) {
        this.inbox = Objects.requireNonNull(inbox, "inbox");
        this.transactionKey = transactionKey(Objects.requireNonNull(dataSource, "dataSource"));
        this.ownTransactions = ownTransactions;
    }

    /** {@return the inbox this applies through}, for its stats, retention and lookups. */
    public JdbiInbox inbox() {
        return inbox;
    }

    /**
     * Applies {@code effect} once for {@code id}, in the caller's Spring-managed transaction, or in
     * one of its own when there is none.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param effect the business change, run only for a new id; it may ignore the handle it gets and
     *     write through {@code JdbcClient}, {@code JdbcTemplate} or JPA instead
     * @return the outcome: final when this call opened the transaction, final once the caller's
     *     transaction commits otherwise
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws InboxException as {@link JdbiInbox#applyIn(Connection, String, Content, Effect)} says,
     *     or if the caller's transaction is not one of the inbox's data source, or is read-only
     * @throws org.springframework.dao.DataAccessException if flushing the caller's JPA persistence
     *     context before the call fails; nothing of the call happened
     */
    @SuppressWarnings("overloads")
    public <R, X extends Exception> Outcome<R> apply(String id, Content content, Effect<Handle, R, X> effect) throws X {
        return apply(id, content, null, effect);
    }

    /**
     * Like {@link #apply(String, Content, Effect)}, for a message that carries its origin time:
     * when the sender first created the business, the same on every resend. A message new to the
     * inbox whose origin time is so old that an earlier delivery may already have been purged is
     * refused with {@link dev.idempotent.inbox.StaleMessageException}, as
     * {@link dev.idempotent.inbox.Inbox#apply(String, Content, Instant, Effect)} describes.
     *
     * @param <R> what the effect returns
     * @param <X> the checked exception the effect may throw
     * @param id the business id, 1 to 255 characters, no control characters
     * @param content what "the same business" means for this id; compared by fingerprint
     * @param originTime when the sender created the business, by its clock; {@code null} when
     *     unknown, which behaves as {@link #apply(String, Content, Effect)}
     * @param effect the business change, run only for a new id
     * @return the outcome, as {@link #apply(String, Content, Effect)} says
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     * @throws InboxException as {@link #apply(String, Content, Effect)} says, and
     *     {@link dev.idempotent.inbox.StaleMessageException} for a stale new message
     */
    public <R, X extends Exception> Outcome<R> apply(String id, Content content, Instant originTime,
            Effect<Handle, R, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return apply(effect, (connection, call) -> inbox.applyIn(connection, id, content, originTime, call),
                () -> inbox.apply(id, content, originTime, effect));
    }

    /**
     * This inbox storing each effect's result with its record, encoded by {@code codec}: a retry
     * then gets the first call's answer in its {@link Outcome.Duplicate}. Its calls join the
     * Spring-managed transaction as this one's do, and store the result in it. Costs nothing until
     * used; views of one inbox may have different codecs, so make one per codec and keep it.
     *
     * @param <R> the result type
     * @param codec how results are stored and read; not {@code null}
     * @return the view; thread-safe, ended by closing the inbox
     * @throws IllegalArgumentException if the codec's type name is not 1 to 100 characters without
     *     control characters, or its version is negative
     */
    @Beta
    public <R> SpringResultInbox<R> storingResults(ResultCodec<R> codec) {
        return new SpringResultInbox<>(this, inbox.storingResults(codec));
    }

    /** How a call applies on a transaction's connection: {@code JdbiInbox}'s or a result view's {@code applyIn}. */
    @FunctionalInterface
    interface Joining<R, X extends Exception> {
        PendingOutcome<R> applyIn(Connection transaction, Effect<Handle, R, X> effect) throws X;
    }

    /** How a call applies without a transaction manager: in the inbox's own transaction. */
    @FunctionalInterface
    interface Owning<R, X extends Exception> {
        Outcome<R> apply() throws X;
    }

    /**
     * Applies in the caller's Spring-managed transaction through {@code joining}, or in one of the
     * application's transaction manager when there is none, or through {@code owning} without one.
     */
    <R, X extends Exception> Outcome<R> apply(Effect<Handle, R, X> effect, Joining<R, X> joining, Owning<R, X> owning)
            throws X {
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
            return join(effect, joining).uncommitted();
        }
        if (ownTransactions == null) {
            return owning.apply();
        }
        PendingOutcome<R> pending;
        try {
            pending = ownTransactions.execute(status -> {
                try {
                    return join(effect, joining);
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Exception e) {
                    throw new EffectFailed(e);
                }
            });
        } catch (EffectFailed e) {
            @SuppressWarnings("unchecked")
            X effectsOwn = (X) e.getCause();
            throw effectsOwn;
        }
        return Objects.requireNonNull(pending, "the transaction returned no outcome").committed();
    }

    /**
     * Like {@link #apply(String, Content, Effect)}, for an effect that returns nothing.
     *
     * @param <X> the checked exception the effect may throw
     * @param id the business id
     * @param content the content
     * @param effect the business change
     * @return the outcome, as {@link #apply(String, Content, Effect)} says
     * @throws X the effect's own exception, unchanged; nothing of the call remains
     */
    @SuppressWarnings("overloads")
    public <X extends Exception> Outcome<Void> apply(String id, Content content, VoidEffect<Handle, X> effect) throws X {
        Objects.requireNonNull(effect, "effect");
        return apply(id, content, tx -> {
            effect.run(tx);
            return null;
        });
    }

    private <R, X extends Exception> PendingOutcome<R> join(Effect<Handle, R, X> effect, Joining<R, X> joining)
            throws X {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            // Spring clears the synchronization before afterCompletion (where an @TransactionalEventListener
            // runs) and leaves the rest bound; with synchronization off it never marks a transaction active.
            if (TransactionSynchronizationManager.isActualTransactionActive()) {
                throw ended();
            }
            throw new InboxException("the Spring transaction has no synchronization active, so the inbox could not"
                    + " learn of its commit; leave the transaction manager's synchronization on (the default)");
        }
        if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
            throw new InboxException("the Spring transaction is read-only, and the inbox records the message in it;"
                    + " apply in a transaction that is not read-only");
        }
        // Whether the transaction is the inbox's is what the transaction manager bound, not what the
        // connection says: a pool may hand out connections with autocommit off to anyone.
        if (!(TransactionSynchronizationManager.getResource(transactionKey) instanceof ConnectionHolder holder)
                || !(TransactionBinding.begun(holder)
                        || JPA_PRESENT && JpaTransactions.bindsConnectionOf(transactionKey))) {
            throw JPA_PRESENT && JpaTransactions.endedOn(transactionKey) ? ended() : notTheInboxs();
        }
        Connection connection = DataSourceUtils.getConnection(transactionKey);
        try {
            if (autoCommit(connection)) {
                throw notTheInboxs();
            }
            // Before the savepoint: the caller's pending entity writes must not be inside it.
            Runnable rollbackOnly = JPA_PRESENT ? JpaTransactions.flush() : null;
            Call<R, X> call = new Call<>(effect);
            PendingOutcome<R> pending;
            try {
                pending = joining.applyIn(connection, call);
            } catch (Throwable failed) {
                try {
                    call.failed(rollbackOnly);
                } catch (RuntimeException e) {
                    // The effect's own exception is what the caller must see.
                    failed.addSuppressed(e);
                }
                throw failed;
            }
            TransactionSynchronizationManager.registerSynchronization(new CompletesOutcome(pending));
            return pending;
        } finally {
            DataSourceUtils.releaseConnection(connection, transactionKey);
        }
    }

    private static InboxException ended() {
        return new InboxException("the current Spring transaction has ended (a call from a TransactionSynchronization's"
                + " afterCommit or afterCompletion, or an @TransactionalEventListener after the commit), so the inbox's"
                + " record could not commit with the effect's writes; run the call in a transaction of its own"
                + " (Propagation.REQUIRES_NEW)");
    }

    private static InboxException notTheInboxs() {
        return new InboxException("the current Spring transaction is not one of the inbox's DataSource (a transaction"
                + " of another data source?), so the inbox's record could not commit with the effect's writes; run the"
                + " call in a transaction of the inbox's DataSource, or outside any");
    }

    /** The data source a transaction manager binds for {@code dataSource}: a transaction-aware proxy's target. */
    static DataSource transactionKey(DataSource dataSource) {
        DataSource key = dataSource;
        while (key instanceof TransactionAwareDataSourceProxy proxy) {
            key = Objects.requireNonNull(proxy.getTargetDataSource(), "the TransactionAwareDataSourceProxy's target");
        }
        return key;
    }

    private static boolean autoCommit(Connection connection) {
        try {
            return connection.getAutoCommit();
        } catch (SQLException e) {
            throw new InboxException("the transaction's connection could not be read: " + e.getMessage(), e);
        }
    }

    /**
     * A joined call's effect, which records whether it ran. A call made inside the effect on the same
     * connection is nested in this one's savepoint by the inbox itself ({@code JoinedCalls}), which
     * undoes its outcome when this call's savepoint goes.
     */
    private static final class Call<R, X extends Exception> implements Effect<Handle, R, X> {

        private final Effect<Handle, R, X> effect;
        private boolean entered;

        Call(Effect<Handle, R, X> effect) {
            this.effect = effect;
        }

        @Override
        public R apply(Handle tx) throws X {
            entered = true;
            return effect.apply(tx);
        }

        /**
         * The call failed after its effect ran: a JPA transaction whose persistence context the effect
         * may have changed is marked rollback-only.
         */
        void failed(Runnable rollbackOnly) {
            if (entered && rollbackOnly != null) {
                rollbackOnly.run();
            }
        }
    }

    /**
     * Tells the inbox how the transaction ended: counts the outcome after a commit, never after a
     * rollback, nor when the inbox undid it with an enclosing call's savepoint.
     */
    private static final class CompletesOutcome implements TransactionSynchronization {

        private final PendingOutcome<?> pending;

        CompletesOutcome(PendingOutcome<?> pending) {
            this.pending = pending;
        }

        @Override
        public void afterCommit() {
            try {
                pending.committed();
            } catch (IllegalStateException e) {
                // The call's savepoint went with an enclosing call's failed effect: the inbox counts
                // nothing, and the commit is no failure.
            }
        }

        @Override
        public void afterCompletion(int status) {
            if (status != STATUS_COMMITTED) {
                pending.rolledBack();
            }
        }
    }

    /** Carries the effect's checked exception out of a {@link TransactionTemplate}, which takes none. */
    private static final class EffectFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        EffectFailed(Exception cause) {
            super(cause);
        }
    }
}
