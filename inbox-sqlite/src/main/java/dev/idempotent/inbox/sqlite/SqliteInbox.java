package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.internal.InboxEngine;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.nio.file.Path;
import java.util.Objects;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * The idempotent inbox on SQLite.
 *
 * <p>Give it the same {@link Jdbi} (or file) your business tables live in: each
 * {@link #apply} opens a {@code BEGIN IMMEDIATE} transaction, claims the id in table
 * {@code inbox_message} (by default), runs the effect with the transaction's {@link Handle} only if the id is
 * new, and commits the effect's writes and the inbox row together.
 *
 * <pre>{@code
 * try (SqliteInbox inbox = SqliteInbox.builder(Path.of("warehouse.db")).name("receipts").build()) {
 *     Outcome<Integer> outcome = inbox.apply("snack-7", Content.of(7),
 *             tx -> tx.execute("UPDATE stock SET total = total + ?", 7));
 * }
 * }</pre>
 *
 * <p>The inbox sets {@code journal_mode=WAL} on the file and {@code synchronous=FULL} on its own
 * connection, because an acknowledgement sent after a commit must survive a power loss. It creates
 * its tables on first use, or brings them up to the schema this release knows, and refuses a file
 * whose tables a newer, incompatible version of the library changed. Its tables are named with the
 * builder's {@link dev.idempotent.inbox.InboxTables} prefix ({@code inbox_} by default, so
 * {@code inbox_message}); SQLite has no schemas, so tables in a schema are refused when the inbox is
 * built. The schema steps are shipped as Flyway migrations: location
 * {@code classpath:dev/idempotent/inbox/sqlite/flyway} for the default names, and
 * {@code classpath:dev/idempotent/inbox/sqlite/flyway-prefixed} with placeholder
 * {@code inbox_table_prefix} for a prefix of your choice; and as the Liquibase changelogs
 * {@code dev/idempotent/inbox/sqlite/liquibase/inbox-changelog.xml} and
 * {@code inbox-changelog-prefixed.xml} (parameter {@code inbox_table_prefix}). With
 * {@link dev.idempotent.inbox.SchemaMode#VALIDATE} the inbox runs no DDL and only checks them.
 *
 * <p>Thread-safe. SQLite admits one writer per file, so this process's calls take turns on one
 * connection, in arrival order. By default ({@link CommitMode#GROUP}) the calls that queue up are
 * committed in groups (one {@code BEGIN IMMEDIATE}, each message in a {@code SAVEPOINT} of its own,
 * one {@code COMMIT}, one disk sync), so an effect may run on another caller's thread, with its
 * caller's {@link dev.idempotent.inbox.CallContext} (the MDC, by default) in place; a lone caller
 * runs at once, on its own thread. With {@link CommitMode#PER_CALLER} every caller runs its own
 * message on its own thread and pays a commit of its own. No call returns before the commit that
 * holds its message. Other processes wait in SQLite's busy handler. The busy timeout bounds each
 * of the two waits.
 */
public final class SqliteInbox extends JdbiInbox {

    private SqliteInbox(Jdbi jdbi, InboxSettings settings) {
        super(InboxEngine.open(settings, new SqliteStore(jdbi, settings.busyTimeout(), settings.schemaMode(),
                settings.tables())), jdbi,
                settings);
    }

    /**
     * A builder for an inbox over {@code jdbi}, which must reach a SQLite file.
     *
     * @param jdbi the Jdbi of the file the business tables live in; not {@code null}
     * @return a builder with default settings
     */
    public static InboxBuilder<SqliteInbox> builder(Jdbi jdbi) {
        Objects.requireNonNull(jdbi, "jdbi");
        return new InboxBuilder<>(CommitMode.GROUP, settings -> new SqliteInbox(jdbi, settings));
    }

    /**
     * A builder for an inbox over the SQLite file {@code file}, created if absent.
     *
     * @param file the database file; not {@code null}
     * @return a builder with default settings
     */
    public static InboxBuilder<SqliteInbox> builder(Path file) {
        return builder(jdbi(file));
    }

    /**
     * A {@link Jdbi} for {@code file} with the durability the inbox needs on every connection:
     * WAL journal, {@code synchronous=FULL}, and a 5 second busy timeout. Use it for the business
     * code that shares the file with the inbox.
     *
     * @param file the database file, created on first connection if absent; not {@code null}
     * @return a Jdbi over that file
     */
    public static Jdbi jdbi(Path file) {
        Objects.requireNonNull(file, "file");
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
        config.setBusyTimeout((int) InboxSettings.DEFAULT_BUSY_TIMEOUT.toMillis());
        SQLiteDataSource dataSource = new SQLiteDataSource(config);
        dataSource.setUrl("jdbc:sqlite:" + file.toAbsolutePath());
        return Jdbi.create(dataSource);
    }


}
