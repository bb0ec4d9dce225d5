package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.testkit.InboxFixture;
import java.nio.file.Path;
import java.time.Instant;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * A real SQLite file in a test's temporary directory, whose inboxes keep their tables under prefix
 * {@link #PREFIX} rather than the default {@code inbox_}: every suite run on it proves the names.
 * The testkit reads the table of records by the names {@link #tables()} gives.
 */
final class SqliteFixture implements InboxFixture {

    /** The prefix of the fixture's tables. */
    static final String PREFIX = "t1_";

    private final Path file;
    private final Jdbi jdbi;
    private final CommitMode commitMode;
    private final InboxTables tables;

    SqliteFixture(Path directory) {
        this(directory, CommitMode.GROUP);
    }

    /** With {@code commitMode}, {@link #builder()} builds inboxes that commit that way. */
    SqliteFixture(Path directory, CommitMode commitMode) {
        this.file = directory.resolve("inbox.db");
        this.commitMode = commitMode;
        this.tables = InboxTables.prefix(PREFIX);
        this.jdbi = SqliteInbox.jdbi(file);
    }

    Path file() {
        return file;
    }

    /** {@return the names of the tables of the inboxes {@link #builder()} builds} */
    @Override
    public InboxTables tables() {
        return tables;
    }

    @Override
    public Jdbi jdbi() {
        return jdbi;
    }

    @Override
    public InboxBuilder<SqliteInbox> builder() {
        // A Jdbi of its own: building again opens the file anew, as a restarted process would.
        return SqliteInbox.builder(file).commitMode(commitMode).tables(tables);
    }

    @Override
    public HeldLock holdWriteLock(String inbox, String id) {
        Handle handle = jdbi.open();
        handle.execute("BEGIN IMMEDIATE");
        return () -> {
            try {
                handle.execute("ROLLBACK");
            } finally {
                handle.close();
            }
        };
    }

    @Override
    public void insertReceivedRows(String inbox, String prefix, int count, Instant receivedAt) {
        jdbi.useHandle(handle -> handle.execute("""
                WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
                INSERT INTO %s (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                           fingerprint, content, received_at)
                SELECT ?, ? || i, 1, 'inbox.int64', 1, ?, NULL, ? FROM n""".formatted(tables.messageTable()),
                count, inbox, prefix, new byte[32], receivedAt.toEpochMilli()));
    }

    @Override
    public void close() {
        // The files live in a temporary directory that the test framework or the caller removes.
    }
}
