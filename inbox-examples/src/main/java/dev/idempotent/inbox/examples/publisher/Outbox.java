package dev.idempotent.inbox.examples.publisher;

import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.examples.http.ProtocolV1;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.sqlite.SQLiteException;

/**
 * The publisher's outbox: items to deliver, in their own SQLite file, in enqueue order.
 *
 * <p>An item is enqueued once per id, and its <em>origin time</em> is the one it was first enqueued
 * with, or else its first enqueue time: sent with every attempt, the same on every resend and after
 * restarts (enqueueing the id again keeps it), so that the receiver can tell a resend too old to
 * judge. Its completion mark ({@link ItemState#ACKED}) is written
 * only after a verified ACK, so a publisher that dies at any point finds every unconfirmed item
 * still {@link ItemState#PENDING} when it starts again. Every write is its own committed
 * transaction; the file is in WAL mode with {@code synchronous=FULL}.
 *
 * <p>Thread-safe: the outbox keeps one connection and serves its callers one at a time, which is
 * cheaper than several connections polling for SQLite's write lock.
 */
public final class Outbox implements AutoCloseable {

    private static final String SCHEMA = """
            CREATE TABLE IF NOT EXISTS outbox_item (
                seq         INTEGER PRIMARY KEY AUTOINCREMENT,
                id          TEXT    NOT NULL UNIQUE,
                qty         INTEGER NOT NULL CHECK (qty >= 1),
                state       TEXT    NOT NULL DEFAULT 'pending'
                                    CHECK (state IN ('pending', 'acked', 'rejected', 'exhausted')),
                attempts    INTEGER NOT NULL DEFAULT 0,
                reason      TEXT,
                applied     INTEGER,
                enqueued_at TEXT    NOT NULL, -- the origin time, sent with every attempt
                settled_at  TEXT
            )""";

    private final Handle handle;
    private final Clock clock;

    private Outbox(Handle handle, Clock clock) {
        this.handle = handle;
        this.clock = clock;
    }

    /**
     * Opens (or creates) the outbox in {@code file}.
     *
     * @throws InboxStorageException if the file cannot be opened or written as a SQLite database;
     *     its {@link InboxStorageException#kind() kind} tells why
     */
    public static Outbox open(Path file) {
        return open(file, Clock.systemUTC());
    }

    /**
     * Opens (or creates) the outbox in {@code file}, stamping times from {@code clock}.
     *
     * @throws InboxStorageException if the file cannot be opened or written as a SQLite database;
     *     its {@link InboxStorageException#kind() kind} tells why
     */
    public static Outbox open(Path file, Clock clock) {
        Handle handle;
        try {
            handle = SqliteInbox.jdbi(file).open();
        } catch (JdbiException e) {
            throw storageFailure(file, e);
        }
        try {
            handle.execute(SCHEMA);
            // A statement that writes nothing but needs write access: a read-only file is found
            // now, not at the first enqueue (CREATE TABLE IF NOT EXISTS of a table that exists
            // does not write, and neither does BEGIN IMMEDIATE).
            handle.execute("DELETE FROM outbox_item WHERE 0");
        } catch (JdbiException e) {
            handle.close();
            throw storageFailure(file, e);
        }
        return new Outbox(handle, clock);
    }

    /** The outbox's storage error for {@code failure}, by SQLite's primary result code. */
    private static InboxStorageException storageFailure(Path file, JdbiException failure) {
        int code = -1;
        String reason = failure.getMessage();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLiteException sqlite) {
                code = sqlite.getResultCode().code & 0xff;
                reason = sqlite.getMessage();
                break;
            }
        }
        // Primary result codes, https://www.sqlite.org/rescode.html
        InboxStorageException.Kind kind = switch (code) {
            case 8 -> InboxStorageException.Kind.READ_ONLY;
            case 11, 26 -> InboxStorageException.Kind.CORRUPT;
            case 13 -> InboxStorageException.Kind.DISK_FULL;
            case 14 -> InboxStorageException.Kind.UNAVAILABLE;
            default -> InboxStorageException.Kind.OTHER;
        };
        return new InboxStorageException(kind, "the outbox " + file + " cannot be used: " + reason, failure);
    }

    /**
     * Enqueues one item.
     *
     * @throws IllegalArgumentException for an invalid id or a quantity below 1
     */
    public Enqueued enqueue(String id, int qty) {
        return enqueueAll(List.of(new Item(id, qty))).get(0);
    }

    /**
     * Enqueues items in the given order, in one transaction: either all are recorded or none.
     *
     * @return what happened to each item, in the same order
     */
    public synchronized List<Enqueued> enqueueAll(List<Item> items) {
        String now = clock.instant().toString();
        return handle.inTransaction(tx -> {
            List<Enqueued> results = new ArrayList<>(items.size());
            for (Item item : items) {
                results.add(enqueue(tx, item, now));
            }
            return results;
        });
    }

    private static Enqueued enqueue(Handle tx, Item item, String now) {
        // Claim first, then read what is stored: never check-then-insert.
        int inserted = tx.createUpdate("INSERT INTO outbox_item (id, qty, enqueued_at) VALUES (:id, :qty, :now)"
                        + " ON CONFLICT (id) DO NOTHING")
                .bind("id", item.id()).bind("qty", item.qty())
                .bind("now", item.origin().map(Instant::toString).orElse(now))
                .execute();
        if (inserted == 1) {
            return Enqueued.ADDED;
        }
        int stored = tx.createQuery("SELECT qty FROM outbox_item WHERE id = ?")
                .bind(0, item.id()).mapTo(Integer.class).one();
        return stored == item.qty() ? Enqueued.ALREADY_ENQUEUED : Enqueued.REFUSED_OTHER_QTY;
    }

    /** Every pending item, in enqueue order. */
    public synchronized List<OutboxItem> pending() {
        return handle.createQuery(
                        "SELECT seq, id, qty, state, attempts, reason, enqueued_at FROM outbox_item WHERE state = 'pending' ORDER BY seq")
                .map((rs, ctx) -> item(rs))
                .list();
    }

    /** Items that were rejected or exhausted, in enqueue order, for the operator. */
    public synchronized List<OutboxItem> parked() {
        return handle.createQuery("SELECT seq, id, qty, state, attempts, reason, enqueued_at FROM outbox_item"
                        + " WHERE state IN ('rejected', 'exhausted') ORDER BY seq")
                .map((rs, ctx) -> item(rs))
                .list();
    }

    /** The item stored for {@code id}, if any. */
    public synchronized Optional<OutboxItem> find(String id) {
        return handle.createQuery("SELECT seq, id, qty, state, attempts, reason, enqueued_at FROM outbox_item WHERE id = ?")
                .bind(0, id)
                .map((rs, ctx) -> item(rs))
                .findOne();
    }

    /** How many items are in each state; every state is present. */
    public synchronized Map<ItemState, Long> counts() {
        Map<ItemState, Long> counts = new EnumMap<>(ItemState.class);
        for (ItemState state : ItemState.values()) {
            counts.put(state, 0L);
        }
        handle.createQuery("SELECT state, COUNT(*) AS n FROM outbox_item GROUP BY state")
                .map((rs, ctx) -> Map.entry(ItemState.ofColumn(rs.getString("state")), rs.getLong("n")))
                .forEach(entry -> counts.put(entry.getKey(), entry.getValue()));
        return counts;
    }

    /**
     * Makes exhausted items pending again, with their attempts counted from zero, so that the next
     * delivery sends them: all exhausted items when {@code ids} is empty, else exactly those, in one
     * transaction. An item exhausted for its age stays safe: the publisher checks the age again
     * before it sends, and parks it again unsent.
     *
     * @return how many items were requeued
     * @throws NotExhausted if an id given is not in the outbox or not exhausted; then nothing is changed
     */
    public synchronized int requeue(List<String> ids) {
        return handle.inTransaction(tx -> {
            if (ids.isEmpty()) {
                return tx.createUpdate("UPDATE outbox_item SET state = 'pending', attempts = 0, reason = NULL,"
                        + " settled_at = NULL WHERE state = 'exhausted'").execute();
            }
            int requeued = 0;
            for (String id : new LinkedHashSet<>(ids)) {
                int updated = tx.createUpdate("UPDATE outbox_item SET state = 'pending', attempts = 0, reason = NULL,"
                                + " settled_at = NULL WHERE id = :id AND state = 'exhausted'")
                        .bind("id", id).execute();
                if (updated == 0) {
                    Optional<String> state = tx.createQuery("SELECT state FROM outbox_item WHERE id = ?")
                            .bind(0, id).mapTo(String.class).findOne();
                    // Thrown inside the transaction: the items requeued before this one roll back.
                    throw new NotExhausted(id, state.map(ItemState::ofColumn));
                }
                requeued++;
            }
            return requeued;
        });
    }

    /** An id given to {@link #requeue} that names no exhausted item. */
    public static final class NotExhausted extends RuntimeException {
        private final String id;
        private final transient Optional<ItemState> state;

        NotExhausted(String id, Optional<ItemState> state) {
            super(id + (state.isEmpty() ? " is not in the outbox" : " is " + state.get().column() + ", not exhausted"),
                    null, false, false);
            this.id = id;
            this.state = state;
        }

        /** The id given. */
        public String id() {
            return id;
        }

        /** The item's state, or empty if the outbox has no such item. */
        public Optional<ItemState> state() {
            return state;
        }
    }

    /** Writes the completion mark after a verified ACK, counting the attempt. */
    void markAcked(String id, boolean applied) {
        settle(id, ItemState.ACKED, null, applied);
    }

    /** Parks a pending item as rejected or exhausted, with its reason, counting the attempt. */
    void park(String id, ItemState state, String reason) {
        settle(id, state, reason, null);
    }

    /** Parks a pending item that was not sent this time; the attempt count stays as it was. */
    synchronized void parkUnsent(String id, ItemState state, String reason) {
        handle.createUpdate("UPDATE outbox_item SET state = :state, reason = :reason, settled_at = :now"
                        + " WHERE id = :id AND state = 'pending'")
                .bind("id", id).bind("state", state.column()).bind("reason", reason)
                .bind("now", clock.instant().toString())
                .execute();
    }

    /** Counts an uncertain attempt; the item stays pending. */
    synchronized void recordUncertain(String id, String reason) {
        handle.createUpdate("UPDATE outbox_item SET attempts = attempts + 1, reason = :reason"
                        + " WHERE id = :id AND state = 'pending'")
                .bind("id", id).bind("reason", reason)
                .execute();
    }

    private synchronized void settle(String id, ItemState state, String reason, Boolean applied) {
        handle.createUpdate("UPDATE outbox_item SET state = :state, attempts = attempts + 1,"
                        + " reason = :reason, applied = :applied, settled_at = :now WHERE id = :id AND state = 'pending'")
                .bind("id", id).bind("state", state.column()).bind("reason", reason)
                .bind("applied", applied).bind("now", clock.instant().toString())
                .execute();
    }

    /** The clock the outbox stamps times from; the publisher measures items' ages by it. */
    Clock clock() {
        return clock;
    }

    /** Closes the outbox's connection; the file and its items stay. */
    @Override
    public synchronized void close() {
        handle.close();
    }

    private static OutboxItem item(ResultSet rs) throws SQLException {
        return new OutboxItem(rs.getLong("seq"), rs.getString("id"), rs.getInt("qty"),
                ItemState.ofColumn(rs.getString("state")), rs.getInt("attempts"), rs.getString("reason"),
                Instant.parse(rs.getString("enqueued_at")));
    }

    /**
     * An item to enqueue.
     *
     * @param id the business id, valid under protocol version 1
     * @param qty the quantity, at least 1
     * @param origin when the business was created, if the sender knows; empty for the time the item
     *     is first enqueued
     */
    public record Item(String id, int qty, Optional<Instant> origin) {
        /** @throws IllegalArgumentException for an invalid id or a quantity below 1 */
        public Item {
            if (id == null) {
                throw new IllegalArgumentException("id is missing");
            }
            Objects.requireNonNull(origin, "origin");
            Optional<String> problem = ProtocolV1.idProblem(id);
            if (problem.isPresent()) {
                throw new IllegalArgumentException(problem.get());
            }
            if (qty < 1) {
                throw new IllegalArgumentException("qty must be at least 1, was " + qty);
            }
        }

        /** An item whose origin time is the time it is first enqueued. */
        public Item(String id, int qty) {
            this(id, qty, Optional.empty());
        }
    }
}
