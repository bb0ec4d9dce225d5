package dev.idempotent.inbox.testing;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.Fingerprint;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.testing.InMemoryDatabase.Fault;
import dev.idempotent.inbox.testing.InMemoryDatabase.Key;
import dev.idempotent.inbox.testing.InMemoryDatabase.State;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The inbox SPI over an {@link InMemoryDatabase}: what an adapter implements, without SQL.
 * Effects receive a {@link Tx}, through which they read and write the database's business values
 * in the inbox's transaction.
 *
 * <p>Transactions keep to the {@link StoreTransaction} contract strictly, so that the engine's
 * mistakes show: using one after it ended, or from a thread other than the one that began it,
 * throws {@link IllegalStateException}, and so does ending a savepoint that is not open.
 */
public final class InMemoryStore implements InboxStore<InMemoryStore.Tx> {

    private static final Comparator<InboxRecord> PURGE_ORDER =
            Comparator.comparing(InMemoryStore::position);

    private final InMemoryDatabase database;
    private final Duration busyTimeout;
    private volatile boolean closed;

    /**
     * @param busyTimeout how long {@link #begin()} waits for the writer
     */
    public InMemoryStore(InMemoryDatabase database, Duration busyTimeout) {
        this.database = Objects.requireNonNull(database, "database");
        this.busyTimeout = Objects.requireNonNull(busyTimeout, "busyTimeout");
    }

    /** One at a time, as the database's single writer permits. */
    @Override
    public Writers writers() {
        return Writers.ONE;
    }

    @Override
    public StoreTransaction<Tx> begin() {
        if (closed) {
            throw new InboxException("the store is closed");
        }
        database.acquireWriter(busyTimeout);
        database.began();
        return new Transaction(database.committed());
    }

    /**
     * The transaction {@code callerHandle} belongs to, which the caller began with {@link #begin()}
     * and ends itself. The core may use it for one savepoint's work; ending it is refused.
     */
    @Override
    public StoreTransaction<Tx> join(Tx callerHandle) {
        if (closed) {
            throw new InboxException("the store is closed");
        }
        Transaction caller = callerHandle.transaction;
        if (caller.ended) {
            throw new InboxException("the caller's transaction has ended; joining needs an open one");
        }
        return new Joined(caller);
    }

    @Override
    public Optional<InboxRecord> find(String inbox, String id) {
        return database.row(inbox, id);
    }

    @Override
    public Optional<Instant> horizon(String inbox) {
        return database.horizon(inbox);
    }

    @Override
    public Optional<Instant> oldestReceivedAt(String inbox) {
        return database.committed().rows().values().stream()
                .filter(row -> row.inbox().equals(inbox))
                .map(InboxRecord::firstReceivedAt)
                .min(Comparator.naturalOrder());
    }

    @Override
    public void close() {
        closed = true;
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    private static PurgePosition position(InboxRecord row) {
        return new PurgePosition(row.firstReceivedAt(), row.id());
    }

    /** The handle effects write through: the business values, as the open transaction sees them. */
    public static final class Tx {
        private final Transaction transaction;

        private Tx(Transaction transaction) {
            this.transaction = transaction;
        }

        /** The value under {@code key} in this transaction; zero if none was written. */
        public long value(String key) {
            transaction.checkUsable();
            return transaction.working.values.getOrDefault(key, 0L);
        }

        /** Sets the value under {@code key} in this transaction. */
        public void put(String key, long value) {
            transaction.checkUsable();
            transaction.working.values.put(key, value);
        }

        /** Adds {@code delta} to the value under {@code key} in this transaction; returns the new value. */
        public long add(String key, long delta) {
            transaction.checkUsable();
            return transaction.working.values.merge(key, delta, Long::sum);
        }
    }

    /** The transaction's private copy of the database; a savepoint keeps another copy. */
    private static final class Working {
        final Map<Key, InboxRecord> rows;
        final Map<String, Instant> horizons;
        final Map<String, Long> values;

        Working(Map<Key, InboxRecord> rows, Map<String, Instant> horizons, Map<String, Long> values) {
            this.rows = new HashMap<>(rows);
            this.horizons = new HashMap<>(horizons);
            this.values = new HashMap<>(values);
        }

        Working copy() {
            return new Working(rows, horizons, values);
        }
    }

    /** The caller's transaction as the core sees it when it joins: one savepoint's work, no end. */
    private static final class Joined implements StoreTransaction<Tx> {
        private final Transaction caller;
        private int depth;
        private boolean done;

        Joined(Transaction caller) {
            this.caller = caller;
        }

        private Transaction use() {
            if (done) {
                throw new IllegalStateException("the joined work ended with its savepoint");
            }
            return caller;
        }

        @Override
        public Tx handle() {
            return use().handle();
        }

        @Override
        public Optional<InboxRecord> claim(
                String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
            if (depth == 0) {
                throw new IllegalStateException("a joined claim runs inside the core's savepoint");
            }
            return use().claim(inbox, id, fingerprint, content, receivedAt);
        }

        @Override
        public void storeResult(String inbox, String id, EncodedResult result) {
            use().storeResult(inbox, id, result);
        }

        @Override
        public Optional<Instant> horizon(String inbox) {
            return use().horizon(inbox);
        }

        @Override
        public void savepoint() {
            use().savepoint();
            depth++;
        }

        @Override
        public void releaseSavepoint() {
            use().releaseSavepoint();
            ended();
        }

        @Override
        public void rollbackToSavepoint() {
            use().rollbackToSavepoint();
            ended();
        }

        private void ended() {
            if (--depth == 0) {
                done = true;
            }
        }

        @Override
        public void raiseHorizon(String inbox, Instant cutoff) {
            throw new IllegalStateException("the core never purges in a joined transaction");
        }

        @Override
        public PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
            throw new IllegalStateException("the core never purges in a joined transaction");
        }

        @Override
        public void commit() {
            throw new IllegalStateException("the caller owns a joined transaction; the core must not commit it");
        }

        @Override
        public void rollback() {
            throw new IllegalStateException("the caller owns a joined transaction; the core must not roll it back");
        }
    }

    private final class Transaction implements StoreTransaction<Tx> {
        private final Thread owner = Thread.currentThread();
        private final Tx handle = new Tx(this);
        private final Deque<Working> savepoints = new ArrayDeque<>();
        private Working working;
        private boolean ended;

        Transaction(State committed) {
            this.working = new Working(committed.rows(), committed.horizons(), committed.values());
        }

        void checkUsable() {
            if (ended) {
                throw new IllegalStateException("the transaction has ended");
            }
            if (Thread.currentThread() != owner) {
                throw new IllegalStateException("a transaction is used by one thread, but " + owner.getName()
                        + " began it and " + Thread.currentThread().getName() + " used it");
            }
        }

        @Override
        public Tx handle() {
            checkUsable();
            return handle;
        }

        @Override
        public Optional<InboxRecord> claim(
                String inbox, String id, Fingerprint fingerprint, Content content, Instant receivedAt) {
            checkUsable();
            // One writer at a time: no other transaction can hold an uncommitted claim of this id.
            InboxRecord offered = new InboxRecord(inbox, id, fingerprint, receivedAt, Optional.ofNullable(content));
            InboxRecord stored = working.rows.putIfAbsent(new Key(inbox, id), offered);
            return Optional.ofNullable(stored);
        }

        @Override
        public void storeResult(String inbox, String id, EncodedResult result) {
            checkUsable();
            InboxRecord claimed = working.rows.get(new Key(inbox, id));
            if (claimed == null) {
                throw new IllegalStateException("no claim of " + id + " to store a result on");
            }
            working.rows.put(new Key(inbox, id), new InboxRecord(claimed.inbox(), id, claimed.fingerprint(),
                    claimed.firstReceivedAt(), claimed.content(), Optional.of(result)));
        }

        @Override
        public Optional<Instant> horizon(String inbox) {
            checkUsable();
            return Optional.ofNullable(working.horizons.get(inbox));
        }

        @Override
        public void raiseHorizon(String inbox, Instant cutoff) {
            checkUsable();
            working.horizons.merge(inbox, cutoff, (kept, offered) -> kept.isAfter(offered) ? kept : offered);
        }

        @Override
        public PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
            checkUsable();
            database.purgeCalled(new InMemoryDatabase.PurgeCall(inbox, cutoff, after, limit, database.horizon(inbox)));
            List<InboxRecord> doomed = working.rows.values().stream()
                    .filter(row -> row.inbox().equals(inbox))
                    .filter(row -> row.firstReceivedAt().isBefore(cutoff))
                    .filter(row -> after == null || position(row).compareTo(after) > 0)
                    .sorted(PURGE_ORDER)
                    .limit(limit)
                    .toList();
            doomed.forEach(row -> working.rows.remove(new Key(inbox, row.id())));
            return PurgeBatch.of(doomed.stream().map(InMemoryStore::position).toList());
        }

        @Override
        public void savepoint() {
            checkUsable();
            savepoints.push(working.copy());
        }

        @Override
        public void releaseSavepoint() {
            checkUsable();
            if (savepoints.isEmpty()) {
                throw new IllegalStateException("no savepoint is open");
            }
            savepoints.pop();
        }

        @Override
        public void rollbackToSavepoint() {
            checkUsable();
            if (savepoints.isEmpty()) {
                throw new IllegalStateException("no savepoint is open");
            }
            working = savepoints.pop();
        }

        @Override
        public void commit() {
            checkUsable();
            Fault fault = database.nextCommitFault();
            if (fault == Fault.FAIL) {
                throw new InboxStorageException(InboxStorageException.Kind.OTHER,
                        "the commit failed (injected); nothing was written", null);
            }
            database.publish(new State(working.rows, working.horizons, working.values));
            end();
            if (fault == Fault.LOSE_REPLY) {
                throw new OutcomeUnknownException("the commit's reply was lost (injected); it did take effect", null);
            }
        }

        @Override
        public void rollback() {
            if (ended) {
                return;
            }
            checkUsable();
            database.rolledBack();
            end();
        }

        private void end() {
            ended = true;
            working = null;
            savepoints.clear();
            database.released();
        }
    }
}
