package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.stream.Stream;

/**
 * What every SQLite benchmark shares: a fresh database file in its own temp directory, with the
 * inbox's schema (created by the inbox itself) and a one-row {@code stock} table; the inbox under
 * test and the hand-written baseline, both open on that file; and the operations both sides run.
 *
 * <p>Benchmarks subclass it as a JMH {@code @State}, declare their {@code @Param}s and call
 * {@link #open} from their {@code @Setup} and {@link #close} from their {@code @TearDown}.
 */
public abstract class SqliteState {

    static final String INBOX = "bench";
    static final long QUANTITY = 7;
    static final String CREATE_STOCK = "CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)";

    private final AtomicLong sequence = new AtomicLong();
    private long seed;
    private Path dir;
    private Path file;
    private SqliteInbox inbox;
    private HandWrittenInbox jdbc;
    private PreparedStatement effectUpdate; // used only inside the inbox's write lock

    /** Opens a new file under {@code location}'s directory, with {@code rows} rows already stored. */
    protected void open(Location location, long rows, LongFunction<String> idOfRow) throws Exception {
        open(location.parent(), rows, idOfRow);
    }

    /** The same, with the inbox under test committing in {@code commitMode}. */
    protected void open(Location location, long rows, LongFunction<String> idOfRow, CommitMode commitMode)
            throws Exception {
        open(location.parent(), rows, idOfRow, commitMode);
    }

    void open(Path parent, long rows, LongFunction<String> idOfRow) throws Exception {
        open(parent, rows, idOfRow, null);
    }

    /** {@code commitMode} {@code null} leaves the adapter's default. */
    void open(Path parent, long rows, LongFunction<String> idOfRow, CommitMode commitMode) throws Exception {
        dir = Files.createTempDirectory(parent, "inbox-bench-");
        file = dir.resolve("bench.db");
        try (SqliteInbox creator = SqliteInbox.builder(file).name(INBOX).build()) {
            creator.jdbi().useHandle(db -> {
                db.execute(CREATE_STOCK);
                db.execute("INSERT INTO stock (id, total) VALUES (1, 0)");
            });
        }
        if (rows > 0) {
            insertRows(file, rows, idOfRow);
        }
        var builder = SqliteInbox.builder(file).name(INBOX);
        inbox = (commitMode == null ? builder : builder.commitMode(commitMode)).build();
        jdbc = new HandWrittenInbox(file, INBOX);
        seed = ThreadLocalRandom.current().nextLong();
    }

    /**
     * Stores {@code rows} rows exactly as the inbox would have (content {@link #QUANTITY}), in one
     * transaction without syncs or WAL, which takes seconds rather than the hours of one commit
     * per row; the file is switched back to WAL afterwards and synced once.
     */
    static void insertRows(Path file, long rows, LongFunction<String> idOfRow) throws SQLException, IOException {
        var fingerprint = Content.of(QUANTITY).fingerprint();
        long firstReceivedAt = System.currentTimeMillis() - rows;
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
             Statement pragma = c.createStatement()) {
            pragma.execute("PRAGMA journal_mode = DELETE");
            pragma.execute("PRAGMA synchronous = OFF");
            pragma.execute("PRAGMA cache_size = -1048576");
            pragma.execute("BEGIN IMMEDIATE");
            try (PreparedStatement insert = c.prepareStatement(HandWrittenInbox.CLAIM)) {
                insert.setString(1, INBOX);
                insert.setInt(3, fingerprint.algorithm());
                insert.setString(4, fingerprint.contentType().name());
                insert.setInt(5, fingerprint.contentType().version());
                insert.setBytes(6, fingerprint.digest());
                for (long row = 0; row < rows; row++) {
                    insert.setString(2, idOfRow.apply(row));
                    insert.setLong(7, firstReceivedAt + row);
                    insert.executeUpdate();
                }
            }
            pragma.execute("COMMIT");
            pragma.execute("PRAGMA journal_mode = WAL");
        }
        // The kernel writes the unsynced gigabyte back when it chooses, perhaps while calls are
        // timed; synced here, the write-back is over before warm-up starts.
        try (FileChannel written = FileChannel.open(file, StandardOpenOption.WRITE)) {
            written.force(true);
        }
    }

    /** A new id; the sequence is shared by all threads of the benchmark. */
    String nextId() {
        return Ids.random(seed + sequence.incrementAndGet());
    }

    /** {@code count} new ids, for batch cases. */
    List<String> nextIds(int count) {
        List<String> ids = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            ids.add(nextId());
        }
        return ids;
    }

    /** The inbox as a user calls it, the effect written as in the README. */
    Outcome<Integer> inboxApply(String id) {
        return inbox.apply(id, Content.of(QUANTITY), tx -> tx.execute(HandWrittenInbox.UPDATE, QUANTITY));
    }

    /**
     * The inbox with an effect that reuses one prepared statement on the inbox's connection, as the
     * baseline does: separates what the inbox costs from what a Jdbi-written effect costs.
     */
    Outcome<Integer> inboxApplyPreparedEffect(String id) throws SQLException {
        return inbox.apply(id, Content.of(QUANTITY), tx -> preparedUpdate(tx.getConnection()).executeUpdate());
    }

    /**
     * {@code ids} in one {@code applyAll} transaction; returns how many were newly applied. The
     * effect is written with Jdbi as in the README, or, with {@code preparedEffect}, reuses one
     * prepared statement as the baseline does.
     */
    int inboxApplyAll(List<String> ids, boolean preparedEffect) {
        List<Message> messages = new ArrayList<>(ids.size());
        for (String id : ids) {
            messages.add(Message.of(id, Content.of(QUANTITY)));
        }
        List<MessageResult<Integer>> results = preparedEffect
                ? inbox.applyAll(messages, (tx, message) -> preparedUpdate(tx.getConnection()).executeUpdate())
                : inbox.applyAll(messages, (tx, message) -> tx.execute(HandWrittenInbox.UPDATE, QUANTITY));
        int applied = 0;
        for (MessageResult<Integer> result : results) {
            applied += result.outcome().filter(Outcome::isNewlyApplied).isPresent() ? 1 : 0;
        }
        return applied;
    }

    private PreparedStatement preparedUpdate(Connection connection) throws SQLException {
        if (effectUpdate == null || effectUpdate.getConnection() != connection) {
            effectUpdate = connection.prepareStatement(HandWrittenInbox.UPDATE);
        }
        effectUpdate.setLong(1, QUANTITY);
        return effectUpdate;
    }

    SqliteInbox inbox() {
        return inbox;
    }

    HandWrittenInbox jdbc() {
        return jdbc;
    }

    Path file() {
        return file;
    }

    /** Closes both sides and deletes the directory with the file, its WAL and shared memory. */
    protected void close() throws Exception {
        Exception failure = null;
        for (AutoCloseable side : new AutoCloseable[] {inbox, jdbc}) {
            try {
                if (side != null) {
                    side.close();
                }
            } catch (Exception e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        inbox = null;
        jdbc = null;
        effectUpdate = null;
        if (dir != null) {
            deleteTree(dir);
            dir = null;
        }
        if (failure != null) {
            throw failure;
        }
    }

    static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
