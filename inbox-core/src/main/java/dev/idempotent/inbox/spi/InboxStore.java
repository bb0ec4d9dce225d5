package dev.idempotent.inbox.spi;

import dev.idempotent.inbox.InboxRecord;
import java.util.Optional;

/**
 * What an adapter implements for {@link InboxEngine}: a few storage operations with precise
 * contracts. The decision "applied, duplicate or conflict" is the engine's, not the adapter's.
 *
 * <p>Adapters translate every database error into the matching
 * {@link dev.idempotent.inbox.InboxException} subclass.
 *
 * @param <H> the transaction handle effects receive
 */
public interface InboxStore<H> extends AutoCloseable {

    /**
     * Opens a write transaction in which a claim can be made and an effect run, waiting at most the
     * inbox's busy timeout for the write lock.
     *
     * @return the open transaction; the caller ends it
     * @throws dev.idempotent.inbox.InboxBusyException if the lock was not obtained in time
     * @throws dev.idempotent.inbox.InboxStorageException if the database failed
     */
    StoreTransaction<H> begin();

    /**
     * Reads the committed record of {@code id} in inbox {@code inbox}, outside any transaction.
     *
     * @param inbox the inbox's name
     * @param id the business id
     * @return the record, or empty if there is none
     */
    Optional<InboxRecord> find(String inbox, String id);

    /** Releases the store's connections. */
    @Override
    void close();
}
