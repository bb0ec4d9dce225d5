package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.InboxException;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.spi.JdbiPlugin;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.core.statement.StatementCustomizer;

/**
 * The SQLite files whose write lock the current thread holds while one of its effects runs. From
 * inside such an effect, a second connection to the same file can read, but its first write waits
 * for the very transaction it is called from, until the busy timeout, and then fails with a
 * misleading SQLITE_BUSY. The inbox refuses that at once, by name: {@link #refuseIfHeld} when an
 * inbox on the file would begin a transaction, and {@link Guard} when a handle of the inbox's
 * {@code Jdbi} would write.
 */
final class WriteLocks {

    // Per file, the handles whose effects hold its write lock: more than one when an effect applies,
    // joined, another message on its own handle. Those handles may write; no other may.
    private static final ThreadLocal<Map<String, List<Handle>>> held = ThreadLocal.withInitial(HashMap::new);

    private WriteLocks() {}

    /**
     * Marks {@code file}'s write lock held by an effect on this thread, writing through
     * {@code handle}, until {@link #release}.
     */
    static void hold(String file, Handle handle) {
        held.get().computeIfAbsent(file, f -> new ArrayList<>()).add(handle);
    }

    static void release(String file, Handle handle) {
        List<Handle> holders = held.get().get(file);
        if (holders != null) {
            holders.remove(handle);
            if (holders.isEmpty()) {
                held.get().remove(file);
            }
        }
    }

    /**
     * Throws if an effect on this thread holds {@code file}'s write lock.
     *
     * @param doing what was about to happen, as "opening a handle on the inbox's Jdbi"
     */
    static void refuseIfHeld(String file, String doing) {
        if (held.get().containsKey(file)) {
            throw new InboxException(doing + " from inside an effect that holds the write lock of " + file + ": SQLite"
                    + " admits one writer, so it would wait for the transaction it is called from. Write through the"
                    + " handle the effect was given; to record two inboxes' ids with one change, apply both joined"
                    + " (applyIn) in one transaction of your own");
        }
    }

    /**
     * Refuses a write, inside an effect, through a handle of the Jdbi whose file that effect is
     * writing: reads from another connection are fine in WAL mode (they see the file as it was
     * before the effect's transaction), writes would wait for that very transaction.
     */
    record Guard(String file) implements JdbiPlugin {
        @Override
        public Handle customizeHandle(Handle handle) {
            handle.addCustomizer(new StatementCustomizer() {
                @Override
                public void beforeExecution(PreparedStatement statement, StatementContext context) {
                    List<Handle> holders = held.get().get(file);
                    if (holders != null && !holders.contains(handle) && writes(context.getRenderedSql())) {
                        refuseIfHeld(file, "writing through another connection (inbox.jdbi(), say)");
                    }
                }
            });
            return handle;
        }
    }

    /**
     * Whether {@code sql} may write, by its first keyword (and, after {@code WITH}, any writing
     * keyword): what cannot be told is taken as a write only when it names one, so a read is never
     * refused.
     */
    static boolean writes(String sql) {
        if (sql == null) {
            return false;
        }
        String text = sql.stripLeading().toUpperCase(Locale.ROOT);
        if (text.startsWith("SELECT") || text.startsWith("VALUES") || text.startsWith("EXPLAIN")) {
            return false;
        }
        if (text.startsWith("PRAGMA")) {
            return text.contains("=");
        }
        if (text.startsWith("WITH")) {
            return WRITING_WORD.matcher(text).find();
        }
        return true;
    }

    private static final Pattern WRITING_WORD = Pattern.compile("\\b(INSERT|UPDATE|DELETE|REPLACE)\\b");
}
