package dev.idempotent.inbox.spi;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxRecord;
import java.time.Instant;
import java.util.Optional;

/**
 * One open write transaction of an {@link InboxStore}, used by one thread at a time.
 *
 * <p>The core calls its operations in this order, and a store may rely on it:
 *
 * <ol>
 *   <li>for each message: {@link #savepoint()} when the message shares the transaction with others,
 *       then {@link #claim}; if the claim is new and the message has an origin time,
 *       {@link #horizon}; then, only when the effect is about to run, {@link #handle()}, the
 *       effect, {@link #storeResult} when the inbox stores results, and {@link #releaseSavepoint()}
 *       or, if anything failed, {@link #rollbackToSavepoint()};
 *   <li>or, at the start of a purge: {@link #raiseHorizon} alone;
 *   <li>or, for a purge batch: {@link #raiseHorizon}, then {@link #deleteOldest};
 *   <li>then exactly one {@link #commit()} or {@link #rollback()}; {@link #rollback()} also after a
 *       failed {@code commit()}.
 * </ol>
 *
 * <p>A store may defer statements whose answer can wait (transaction settings, a savepoint, a
 * stored result) and send them in front of the next one, or with the {@code COMMIT} or the
 * savepoint's release, so long as a failure of theirs still fails the call before anything commits;
 * {@link #handle()} is where it must send what it deferred, since the effect's statements follow.
 *
 * @param <H> the transaction handle effects receive
 */
@Beta
public interface StoreTransaction<H> {

    /**
     * The handle effects write through; it belongs to this transaction. Called right before an
     * effect runs.
     *
     * @return the handle, with every statement the store deferred already sent
     */
    H handle();

    /**
     * Claims {@code id} atomically: inserts the record if the id is absent (a primary key and an
     * insert that does nothing on conflict; never check-then-insert), and otherwise leaves the
     * stored record as it is.
     *
     * <p>If another transaction holds an uncommitted claim of the same id, this call waits for it
     * to end (within the busy timeout), so the answer reflects committed data.
     *
     * @param inbox the inbox's name
     * @param id a valid id
     * @param fingerprint the content's fingerprint
     * @param content the content to keep beside the fingerprint, or {@code null} to keep none
     * @param receivedAt the receive time, to the millisecond
     * @return empty if this call inserted the record; otherwise the record already stored
     */
    Optional<InboxRecord> claim(String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt);

    /**
     * Stores an effect's result on the record this transaction has just claimed for {@code id}, in
     * the same transaction, so the result commits or rolls back with the record and the effect.
     *
     * @param inbox the inbox's name
     * @param id the id this transaction claimed
     * @param result the result as encoded, within the inbox's size limit
     */
    void storeResult(String inbox, String id, EncodedResult result);

    /**
     * Reads the horizon of {@code inbox} as this transaction sees it: the receive time before
     * which its rows may have been purged. Read after a claim, it sees a purge that the claim
     * waited for.
     *
     * @param inbox the inbox's name
     * @return the horizon, or empty if the inbox was never purged
     */
    Optional<Instant> horizon(String inbox);

    /**
     * Starts a nested unit of work inside the transaction (a SQL {@code SAVEPOINT}), ended by
     * {@link #releaseSavepoint()} or {@link #rollbackToSavepoint()}.
     */
    void savepoint();

    /**
     * Ends the innermost savepoint, keeping its writes in the transaction.
     *
     * @throws dev.idempotent.inbox.EffectBrokeTransactionException if the effect left the
     *     transaction unable to commit; the core then rolls back to the savepoint
     */
    void releaseSavepoint();

    /**
     * Undoes the writes since the innermost savepoint and ends it; the transaction stays open.
     *
     * @throws dev.idempotent.inbox.InboxException if that is impossible (the database already
     *     rolled the whole transaction back, for instance); the core then rolls back
     */
    void rollbackToSavepoint();

    /**
     * Raises the horizon of {@code inbox} to {@code cutoff} unless it is already later; never
     * lowers it. Raising it in the same transaction as the delete, before it, means a crash
     * between the two never leaves purged rows above the horizon.
     *
     * @param inbox the inbox's name
     * @param cutoff the new horizon, to the millisecond
     */
    void raiseHorizon(String inbox, Instant cutoff);

    /**
     * Deletes at most {@code limit} rows of {@code inbox} received before {@code cutoff} and
     * after {@code after} in {@code (received_at, id)} order, oldest first.
     *
     * @param inbox the inbox's name
     * @param cutoff rows received before it are deleted
     * @param after where the previous batch of this purge ended; {@code null} for the first batch
     * @param limit the most rows to delete
     * @return what was deleted
     */
    PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit);

    /**
     * Commits. On an exception the transaction may still be open: the core then calls
     * {@link #rollback()}.
     *
     * @throws dev.idempotent.inbox.EffectBrokeTransactionException if an effect left the
     *     transaction unable to commit what it did
     * @throws dev.idempotent.inbox.OutcomeUnknownException if the commit may or may not have taken
     *     effect
     */
    void commit();

    /**
     * Rolls back and releases the transaction. Safe to call after a failed {@link #commit()}; an
     * exception thrown here is attached to the original failure.
     */
    void rollback();
}
