package dev.idempotent.inbox.spring;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Effect;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.VoidEffect;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Objects;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

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
 *       throws, neither remains and the exception reaches the caller unchanged (and, thrown out of
 *       a {@code @Transactional} method, rolls the transaction back). The outcome returned is the
 *       one decided in the transaction: an {@link Outcome.Applied} holds once it commits.
 *   <li>Outside one, it opens a transaction of its own through the application's transaction
 *       manager and joins that, so the effect's writes are the same either way; the outcome
 *       returned is final. Without a transaction manager it calls {@link JdbiInbox#apply}, whose
 *       effect must write through the {@link Handle} it is given.
 * </ul>
 *
 * <p>The inbox's {@code stats()} and listener (its metrics) count a joined outcome in the
 * transaction's {@code afterCommit}, and a rolled-back one never. A JPA repository's writes are
 * flushed at commit unless the effect flushes them ({@code saveAndFlush}); either way they commit
 * or roll back with the claim, but only a flushed write fails inside the effect.
 *
 * <p>The transaction must be one of the data source the inbox works in; a transaction of another
 * data source is refused with an {@link InboxException}. Thread-safe.
 */
public final class SpringInbox {

    private final JdbiInbox inbox;
    private final DataSource dataSource;
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
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
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
     *     or if the caller's transaction is not one of the inbox's data source
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
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
            return join(id, content, originTime, effect).uncommitted();
        }
        if (ownTransactions == null) {
            return inbox.apply(id, content, originTime, effect);
        }
        PendingOutcome<R> pending;
        try {
            pending = ownTransactions.execute(status -> {
                try {
                    return join(id, content, originTime, effect);
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

    private <R, X extends Exception> PendingOutcome<R> join(String id, Content content, Instant originTime,
            Effect<Handle, R, X> effect) throws X {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            throw new InboxException("the Spring transaction has no synchronization active, so the inbox could not"
                    + " learn of its commit; leave the transaction manager's synchronization on (the default)");
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            if (autoCommit(connection)) {
                throw new InboxException("the current Spring transaction holds no connection of the inbox's DataSource"
                        + " (a transaction of another data source?); run the call in a transaction of the inbox's");
            }
            PendingOutcome<R> pending = inbox.applyIn(connection, id, content, originTime, effect);
            TransactionSynchronizationManager.registerSynchronization(new CompletesOutcome(pending));
            return pending;
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    private static boolean autoCommit(Connection connection) {
        try {
            return connection.getAutoCommit();
        } catch (SQLException e) {
            throw new InboxException("the transaction's connection could not be read: " + e.getMessage(), e);
        }
    }

    /** Tells the inbox how the transaction ended: counts the outcome after a commit, never after a rollback. */
    private record CompletesOutcome(PendingOutcome<?> pending) implements TransactionSynchronization {

        @Override
        public void afterCommit() {
            pending.committed();
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
