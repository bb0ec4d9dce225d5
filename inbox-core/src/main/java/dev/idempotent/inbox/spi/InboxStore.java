package dev.idempotent.inbox.spi;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.InboxRecord;
import java.time.Instant;
import java.util.Optional;

/**
 * What a storage adapter implements: write transactions, and a few reads outside them. The
 * decision "applied, duplicate or conflict", validation, the effect, counters, logs, the closed
 * and re-entrancy checks and the order of calls are the core's; the store answers each operation
 * as its contract says and translates every database error into the matching
 * {@link dev.idempotent.inbox.InboxException} subclass.
 *
 * <p>The core opens transactions from many threads. A store whose database admits one writer at a
 * time says so in {@link #writers()}, and the core then never has two of its transactions open at
 * once; a store with {@link Writers#CONCURRENT} must allow one open transaction per calling thread.
 *
 * @param <H> the transaction handle effects receive
 */
@Beta
public interface InboxStore<H> extends AutoCloseable {

    /** How many write transactions a store's database runs at once. */
    enum Writers {
        /** One at a time (SQLite): the core queues its callers and opens one transaction at a time. */
        ONE,
        /** Many (PostgreSQL): each caller may run a transaction of its own, in parallel. */
        CONCURRENT
    }

    /** {@return how many write transactions this store's database runs at once} */
    Writers writers();

    /**
     * Opens a write transaction in which ids are claimed, effects run and old rows purged,
     * waiting at most the inbox's busy timeout for the database's write lock.
     *
     * @return the open transaction, to be ended by exactly one commit or rollback
     * @throws dev.idempotent.inbox.InboxBusyException if the lock was not obtained in time
     * @throws dev.idempotent.inbox.InboxStorageException if the database failed
     */
    StoreTransaction<H> begin();

    /**
     * Joins the transaction the caller has open on {@code callerHandle}, for
     * {@link dev.idempotent.inbox.Inbox#applyJoined}. The caller owns that transaction: the core
     * never commits or rolls it back. For each call it uses the returned transaction for one
     * message: {@link StoreTransaction#savepoint()}, {@link StoreTransaction#claim}, perhaps
     * {@link StoreTransaction#horizon} and {@link StoreTransaction#handle()} (which returns the
     * caller's handle), then {@link StoreTransaction#releaseSavepoint()} or
     * {@link StoreTransaction#rollbackToSavepoint()}, and nothing after. When that first savepoint
     * ends, the store has given back whatever it changed on the caller's connection for the claim
     * (a lock timeout, a logger), so the rest of the caller's transaction runs as it would have.
     *
     * <p>The store refuses, with an {@link dev.idempotent.inbox.InboxException} that says what to
     * do instead, a handle in autocommit mode or with no transaction open, and a transaction that
     * cannot take the database's write lock.
     *
     * @param callerHandle the handle of the caller's open transaction
     * @return the caller's transaction as the core uses it
     * @throws dev.idempotent.inbox.InboxException if the handle cannot be joined
     */
    StoreTransaction<H> join(H callerHandle);

    /**
     * Reads the committed record of {@code id} in inbox {@code inbox}, outside any transaction.
     *
     * @param inbox the inbox's name
     * @param id a valid id
     * @return the record, or empty if the id is not stored
     */
    Optional<InboxRecord> find(String inbox, String id);

    /**
     * Reads the committed horizon of {@code inbox}, outside any transaction.
     *
     * @param inbox the inbox's name
     * @return the horizon, or empty if the inbox was never purged
     */
    Optional<Instant> horizon(String inbox);

    /**
     * Reads the receive time of the oldest row of {@code inbox}, outside any transaction.
     *
     * @param inbox the inbox's name
     * @return that time, or empty if the inbox has no rows
     */
    Optional<Instant> oldestReceivedAt(String inbox);

    /** Releases what the store opened; the core calls it once, with no transaction open. */
    @Override
    void close();
}
