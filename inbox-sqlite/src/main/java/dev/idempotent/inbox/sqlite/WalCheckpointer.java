package dev.idempotent.inbox.sqlite;

import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies committed pages from the write-ahead log back into the database file on a thread and a
 * connection of its own.
 *
 * <p>Left to SQLite, the commit that takes the log past its checkpoint threshold copies the pages
 * itself, syncing the database file, and every caller queued behind that commit waits: with 32
 * concurrent callers those stalls set the 99th-percentile latency. A {@code PASSIVE} checkpoint
 * waits for no lock and holds none that the writer needs, so commits go on while it runs. The
 * writer keeps SQLite's own checkpoint with a higher threshold ({@link #WRITER_THRESHOLD_PAGES}),
 * so the log stays bounded even if this thread falls behind or fails.
 */
final class WalCheckpointer implements AutoCloseable {

    /** The writer's own checkpoint threshold, in pages, reached only if this thread falls behind. */
    static final int WRITER_THRESHOLD_PAGES = 10_000;

    // Often enough that the log stays far below the writer's threshold under any load seen here
    // (a few hundred commits between two checkpoints), rarely enough that a slow trickle of
    // commits does not pay a database-file sync each.
    private static final Duration PERIOD = Duration.ofMillis(100);

    private static final Logger log = LoggerFactory.getLogger(WalCheckpointer.class);

    private final Jdbi jdbi;
    private final AtomicLong commits = new AtomicLong();
    private final ScheduledExecutorService thread;
    // Used by the checkpoint thread only, and by close() once that thread has ended.
    private long commitsCheckpointed;
    private Handle handle;

    WalCheckpointer(Jdbi jdbi) {
        this.jdbi = jdbi;
        this.thread = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread checkpoints = new Thread(runnable, "inbox-checkpoint");
            checkpoints.setDaemon(true);
            return checkpoints;
        });
        thread.scheduleWithFixedDelay(this::checkpointIfCommitted, PERIOD.toMillis(), PERIOD.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** Called by the writer after each commit. */
    void committed() {
        commits.incrementAndGet();
    }

    private void checkpointIfCommitted() {
        long seen = commits.get();
        if (seen == commitsCheckpointed) {
            return;
        }
        try {
            if (handle == null) {
                handle = jdbi.open();
            }
            try (Statement statement = handle.getConnection().createStatement()) {
                statement.execute("PRAGMA wal_checkpoint(PASSIVE)");
            }
            commitsCheckpointed = seen;
        } catch (SQLException | JdbiException e) {
            // The writer's own checkpoint still bounds the log; try again with a fresh connection.
            log.debug("background checkpoint failed; the writer checkpoints past {} pages", WRITER_THRESHOLD_PAGES, e);
            closeHandle();
        }
    }

    private void closeHandle() {
        if (handle != null) {
            try {
                handle.close();
            } catch (JdbiException e) {
                log.debug("closing the checkpoint connection failed", e);
            }
            handle = null;
        }
    }

    /** Stops the thread, waiting for a checkpoint in progress, and closes its connection. */
    @Override
    public void close() {
        thread.shutdown();
        try {
            if (!thread.awaitTermination(10, TimeUnit.SECONDS)) {
                log.warn("a background checkpoint did not finish within 10 s; closing its connection anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeHandle();
    }
}
