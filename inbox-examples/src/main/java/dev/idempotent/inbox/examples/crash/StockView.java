package dev.idempotent.inbox.examples.crash;

import dev.idempotent.inbox.InboxTables;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import org.jdbi.v3.core.Jdbi;

/**
 * Reads a receiver's database through an independent connection: a plain sqlite-jdbc connection
 * opened by this process, sharing nothing with any inbox, and seeing only what was committed to
 * the file. After a halted receiver, this is what a restarted one would find.
 */
public final class StockView {

    private StockView() {}

    /**
     * Reads the stock total and the inbox's ids in one read transaction, so both come from the
     * same committed state.
     *
     * @param db the receiver's SQLite file
     */
    public static Snapshot read(Path db) {
        return read(db, CrashReceiver.INBOX);
    }

    /**
     * As {@link #read(Path)}, for another receiver of the same shape (one {@code stock} row, one
     * inbox) whose inbox is named {@code inbox}: the examples' warehouse, for instance.
     *
     * @param db the receiver's SQLite file
     * @param inbox the name its inbox records messages under
     */
    public static Snapshot read(Path db, String inbox) {
        return read(db, inbox, InboxTables.defaults());
    }

    /**
     * As {@link #read(Path, String)}, for an inbox built with table names of its own.
     *
     * @param db the receiver's SQLite file
     * @param inbox the name its inbox records messages under
     * @param tables the inbox's table names, as its builder was given them
     */
    public static Snapshot read(Path db, String inbox, InboxTables tables) {
        String readIds = "SELECT id FROM " + tables.messageTable() + " WHERE inbox = ?";
        Jdbi jdbi = Jdbi.create("jdbc:sqlite:" + db.toAbsolutePath());
        return jdbi.inTransaction(handle -> {
            long total = handle.createQuery(CrashReceiver.READ_TOTAL).mapTo(Long.class).one();
            Set<String> ids = new TreeSet<>(handle.createQuery(readIds)
                    .bind(0, inbox)
                    .mapTo(String.class)
                    .list());
            return new Snapshot(total, ids);
        });
    }

    /**
     * Committed state at one moment.
     *
     * @param total the stock total
     * @param ids the ids with an inbox row
     */
    public record Snapshot(long total, Set<String> ids) {
        public Snapshot {
            ids = Set.copyOf(ids);
        }

        /** Whether {@code id} has an inbox row. */
        public boolean has(String id) {
            return ids.contains(id);
        }

        /** The number of inbox rows. */
        public int rows() {
            return ids.size();
        }
    }
}
