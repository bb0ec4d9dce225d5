package dev.idempotent.inbox.spi;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxRecord;
import java.time.Instant;
import java.util.Optional;

/**
 * One open write transaction of an {@link InboxStore}. Used by one thread, ended by exactly one
 * successful {@link #commit()} or by {@link #rollback()}.
 *
 * @param <H> the transaction handle effects receive
 */
public interface StoreTransaction<H> {

    /** {@return the handle effects write through}; it belongs to this transaction. */
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
     * @param id the business id
     * @param fingerprint the fingerprint of the offered content
     * @param content the content to keep beside the fingerprint, or {@code null} to keep none
     * @param receivedAt the receive time to record
     * @return empty if this call inserted the record; otherwise the record already stored
     */
    Optional<InboxRecord> claim(String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt);

    /**
     * The committed horizon of inbox {@code inbox}: the receive time before which its rows may have
     * been purged. A store that never purges has none.
     *
     * @param inbox the inbox's name
     * @return the horizon, or empty
     */
    default Optional<Instant> horizon(String inbox) {
        return Optional.empty();
    }

    /**
     * Starts a nested unit of work inside the transaction (a SQL {@code SAVEPOINT}), ended by
     * {@link #releaseSavepoint()} or {@link #rollbackToSavepoint()}. Savepoints may nest.
     */
    void savepoint();

    /** Ends the innermost savepoint, keeping its writes in the transaction. */
    void releaseSavepoint();

    /**
     * Undoes the writes since the innermost savepoint and ends it; the transaction stays open.
     *
     * @throws dev.idempotent.inbox.InboxException if that is impossible (the database already
     *     rolled the whole transaction back, for instance); the caller then rolls back
     */
    void rollbackToSavepoint();

    /**
     * Commits. On an exception the transaction may still be open: the caller then calls
     * {@link #rollback()}.
     *
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
