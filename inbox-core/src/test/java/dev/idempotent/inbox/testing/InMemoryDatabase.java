package dev.idempotent.inbox.testing;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.spi.PurgePosition;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A database held in memory, so that the engine can be tested over real transactions without a
 * database server: committed inbox rows, horizons and business values, and one writer at a time.
 * Several {@link InMemoryStore}s may share one database, as several processes share a file.
 *
 * <p>A write transaction works on a private copy of the committed state; its commit replaces the
 * committed state as a whole, so readers see all of a transaction or none of it. The writer is a
 * semaphore rather than a lock: a second transaction begun on a thread that already holds one
 * waits, as a second connection to a single-writer database does, instead of joining it.
 *
 * <p>Switches make the next commit fail, for the failure paths a real database produces rarely.
 */
public final class InMemoryDatabase {

    /** A row's primary key. */
    record Key(String inbox, String id) {}

    /** Everything committed; never changed, only replaced. */
    record State(Map<Key, InboxRecord> rows, Map<String, Instant> horizons, Map<String, Long> values) {
        static final State EMPTY = new State(Map.of(), Map.of(), Map.of());

        State {
            rows = Map.copyOf(rows);
            horizons = Map.copyOf(horizons);
            values = Map.copyOf(values);
        }
    }

    /** How the next faulty commit ends. */
    enum Fault {
        NONE,
        /** Refused before anything was written: an {@code InboxStorageException}; the transaction stays open. */
        FAIL,
        /** Written, but the answer is lost: an {@code OutcomeUnknownException}. */
        LOSE_REPLY
    }

    /** One call of {@code deleteOldest}, with its arguments and the horizon committed when it ran. */
    public record PurgeCall(
            String inbox, Instant cutoff, PurgePosition after, int limit, Optional<Instant> committedHorizon) {}

    private final Semaphore writer = new Semaphore(1, true);
    private volatile State committed = State.EMPTY;
    private final AtomicInteger begins = new AtomicInteger();
    private final AtomicInteger commits = new AtomicInteger();
    private final AtomicInteger rollbacks = new AtomicInteger();
    private final AtomicInteger open = new AtomicInteger();
    private final List<PurgeCall> purgeCalls = new CopyOnWriteArrayList<>();
    private Fault fault = Fault.NONE; // guarded by this
    private int commitsBeforeFault; // guarded by this

    /** Makes the next commit fail with an {@code InboxStorageException}, writing nothing. */
    public void failNextCommit() {
        failCommitAfter(0);
    }

    /** Lets {@code commits} commits succeed, then makes the next one fail as {@link #failNextCommit()}. */
    public synchronized void failCommitAfter(int commits) {
        fault = Fault.FAIL;
        commitsBeforeFault = commits;
    }

    /** Makes the next commit take effect but end in an {@code OutcomeUnknownException}. */
    public synchronized void loseNextCommitReply() {
        fault = Fault.LOSE_REPLY;
        commitsBeforeFault = 0;
    }

    synchronized Fault nextCommitFault() {
        if (fault == Fault.NONE) {
            return Fault.NONE;
        }
        if (commitsBeforeFault > 0) {
            commitsBeforeFault--;
            return Fault.NONE;
        }
        Fault armed = fault;
        fault = Fault.NONE;
        return armed;
    }

    /**
     * Takes the writer from outside any inbox, as another process would, until the returned hold
     * is closed: the inbox's transactions wait for it.
     */
    public WriterHold holdWriter() {
        acquireWriter(Duration.ofSeconds(30));
        return new WriterHold();
    }

    /** The writer taken by {@link #holdWriter()}; closing it releases the writer once. */
    public final class WriterHold implements AutoCloseable {
        private boolean released;

        @Override
        public synchronized void close() {
            if (!released) {
                released = true;
                writer.release();
            }
        }
    }

    /**
     * Commits {@code count} rows of {@code inbox}, ids {@code prefix0} upward, received at
     * {@code receivedAt}, straight into the table as a migration or an old process would have.
     */
    public void insertRows(String inbox, String prefix, int count, Instant receivedAt) {
        acquireWriter(Duration.ofSeconds(30));
        try {
            Map<Key, InboxRecord> rows = new HashMap<>(committed.rows());
            for (int i = 0; i < count; i++) {
                String id = prefix + i;
                rows.put(new Key(inbox, id), new InboxRecord(
                        inbox, id, Content.of(i).fingerprint(), receivedAt, Optional.empty()));
            }
            committed = new State(rows, committed.horizons(), committed.values());
        } finally {
            writer.release();
        }
    }

    void acquireWriter(Duration busyTimeout) {
        try {
            if (!writer.tryAcquire(busyTimeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new InboxBusyException("another transaction held the writer for longer than the busy timeout of "
                        + busyTimeout + "; nothing was applied", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InboxException("interrupted while waiting for the writer; nothing was applied", e);
        }
    }

    void began() {
        begins.incrementAndGet();
        open.incrementAndGet();
    }

    void publish(State state) {
        committed = state;
        commits.incrementAndGet();
    }

    void rolledBack() {
        rollbacks.incrementAndGet();
    }

    void released() {
        open.decrementAndGet();
        writer.release();
    }

    void purgeCalled(PurgeCall call) {
        purgeCalls.add(call);
    }

    State committed() {
        return committed;
    }

    /** The committed business value under {@code key}; zero if none was written. */
    public long value(String key) {
        return committed.values().getOrDefault(key, 0L);
    }

    /** The committed business values. */
    public Map<String, Long> values() {
        return committed.values();
    }

    /** The committed row of {@code id} in {@code inbox}. */
    public Optional<InboxRecord> row(String inbox, String id) {
        return Optional.ofNullable(committed.rows().get(new Key(inbox, id)));
    }

    /** The number of committed rows of {@code inbox}. */
    public long rows(String inbox) {
        return committed.rows().keySet().stream().filter(key -> key.inbox().equals(inbox)).count();
    }

    /** The committed horizon of {@code inbox}. */
    public Optional<Instant> horizon(String inbox) {
        return Optional.ofNullable(committed.horizons().get(inbox));
    }

    /** Write transactions begun, purge batches included. */
    public int begins() {
        return begins.get();
    }

    /** Commits that took effect, including one whose reply was lost. */
    public int commits() {
        return commits.get();
    }

    /** Transactions rolled back. */
    public int rollbacks() {
        return rollbacks.get();
    }

    /** Write transactions open now: zero or one. */
    public int openTransactions() {
        return open.get();
    }

    /** Every {@code deleteOldest} call so far, in order. */
    public List<PurgeCall> purgeCalls() {
        return List.copyOf(purgeCalls);
    }
}
