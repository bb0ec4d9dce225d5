package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.internal.InboxEngine;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.util.Objects;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * The idempotent inbox on PostgreSQL, for consumers that run on several machines against one
 * database.
 *
 * <p>Give it the {@link Jdbi} your business tables live in, over your {@code DataSource} (pooled or
 * not). Each {@link #apply} takes a connection of its own from it, begins a
 * {@code READ COMMITTED} transaction, claims the id in table {@code inbox_message} (by default) with one
 * {@code INSERT ... ON CONFLICT DO NOTHING}, runs the effect with the transaction's {@link Handle}
 * only if the id is new, commits the effect's writes and the inbox row together, and gives the
 * connection back.
 *
 * <pre>{@code
 * Jdbi jdbi = Jdbi.create(dataSource);
 * try (PostgresInbox inbox = PostgresInbox.builder(jdbi).name("receipts").build()) {
 *     Outcome<Integer> outcome = inbox.apply("snack-7", Content.of(7),
 *             tx -> tx.execute("UPDATE stock SET total = total + ?", 7));
 * }
 * }</pre>
 *
 * <h2>Concurrent copies of one id</h2>
 *
 * <p>When two calls (in this process or in any other) apply the same id at once, the second one's
 * claim waits on the primary key of {@code inbox_message} until the first transaction ends. If the
 * first commits, the second returns {@link dev.idempotent.inbox.Outcome.Duplicate} (or
 * {@link dev.idempotent.inbox.Outcome.Conflict} for other content) without running its effect; if
 * the first rolls back (its effect threw, its process died), the second claims the id and returns
 * {@link dev.idempotent.inbox.Outcome.Applied}. The wait counts against the busy timeout, which
 * becomes PostgreSQL's {@code lock_timeout} for the transaction; past it the call throws
 * {@link dev.idempotent.inbox.InboxBusyException} and nothing was applied. Calls on different ids
 * do not wait for each other in the inbox (the effect's own rows may make them wait, as any two
 * transactions writing one row do).
 *
 * <h2>Connections</h2>
 *
 * <p>The connections must come in autocommit mode with no transaction open (the JDBC default, and
 * the default of common pools): Jdbi would silently join an open transaction, so the inbox refuses
 * such a connection with an {@link dev.idempotent.inbox.InboxException}. The inbox sets its
 * isolation level and lock timeout for each transaction only, so a pooled connection goes back as
 * it came. {@link #close()} closes no connection: the {@code Jdbi} and its pool are yours.
 *
 * <h2>Schema</h2>
 *
 * <p>The inbox's tables are {@code inbox_schema}, {@code inbox_message} and {@code inbox_horizon}
 * (and inbox-kafka's {@code inbox_kafka_offset}), or with the prefix of
 * {@link InboxBuilder#tables}, in the schema given there, or else in the first schema of the
 * connection's {@code search_path}. Every statement names them qualified with the schema given, so
 * the {@code search_path} then does not matter. Under {@link dev.idempotent.inbox.SchemaMode#CREATE}
 * (the default) the inbox runs, in one transaction, the schema steps the tables lack (all of them
 * on first use), from the templates under {@code dev/idempotent/inbox/postgres/flyway-prefixed} in
 * this jar with the prefix filled in; over tables at the level it knows it runs no DDL. The same
 * steps are Flyway migrations: location {@code classpath:dev/idempotent/inbox/postgres/flyway} for
 * the default names, or {@code classpath:dev/idempotent/inbox/postgres/flyway-prefixed} with
 * placeholder {@code inbox_table_prefix}; and Liquibase changelogs
 * {@code dev/idempotent/inbox/postgres/liquibase/inbox-changelog.xml} and
 * {@code inbox-changelog-prefixed.xml} (parameter {@code inbox_table_prefix}). An inbox built with
 * {@link dev.idempotent.inbox.SchemaMode#VALIDATE} never runs DDL: it fails with
 * {@link dev.idempotent.inbox.InboxStorageException.Kind#SCHEMA_MISSING}, naming the migrations to
 * run, if the tables are missing or behind. Tables of a newer schema version, which a release of the
 * library this one cannot work with wrote, are refused with
 * {@link dev.idempotent.inbox.InboxStorageException.Kind#NEWER_SCHEMA}; a newer revision of the
 * version it knows (an additive change) is accepted.
 *
 * <h2>Failures</h2>
 *
 * <p>Errors are told apart by SQLState. Lock timeouts, deadlocks and serialization failures in the
 * inbox's own statements throw {@code InboxBusyException}; a read-only transaction or server, a
 * full disk and a lost or refused connection throw {@code InboxStorageException} of kind
 * {@code READ_ONLY}, {@code DISK_FULL} and {@code UNAVAILABLE}. A COMMIT whose answer never came
 * back throws {@link dev.idempotent.inbox.OutcomeUnknownException}. Errors raised by the effect's
 * own statements (a lock timeout on a business row, for instance) reach the caller unchanged, as
 * the effect's exception; the transaction is rolled back and nothing was applied.
 *
 * <h2>Batches and retention</h2>
 *
 * <p>{@link #applyAll} runs a batch in one transaction, each message in a savepoint of its own, so a
 * message whose effect fails (even with a database error, which on PostgreSQL aborts the
 * transaction until the savepoint is rolled back) is undone alone. Two batches that share ids and
 * list them in different orders can deadlock; PostgreSQL then aborts the waiting claim in one of
 * them, and that message alone fails with {@link dev.idempotent.inbox.InboxBusyException}: nothing
 * was applied for it, and it may be retried. Each purge batch of {@link #retention()} is its own
 * short transaction; purges from several processes at once are safe and leave the latest horizon.
 *
 * <p>Thread-safe.
 */
public final class PostgresInbox extends JdbiInbox {

    private PostgresInbox(Jdbi jdbi, InboxSettings settings) {
        super(InboxEngine.open(settings, new PostgresStore(jdbi, settings.busyTimeout(), settings.schemaMode(),
                settings.tables())), jdbi,
                settings);
    }

    /**
     * A builder for an inbox over {@code jdbi}, which must reach a PostgreSQL database. By default
     * ({@link CommitMode#PER_CALLER}) each call runs in a transaction of its own, on its own
     * connection and thread, in parallel with the others.
     *
     * <p>With {@link CommitMode#GROUP} the calls of concurrent callers of this process are committed
     * together: they queue in arrival order, and one writer at a time runs the oldest of them (up to
     * {@link InboxBuilder#maxGroupSize}) in one transaction on one connection, each message in a
     * savepoint of its own, and commits once. A failing effect rolls back only its own message.
     * Effects may run on another caller's thread. It pays when many callers write the same business
     * rows (each parallel transaction would wait for the previous one's commit on the row lock) or
     * when commits, not statements, bound the rate. It costs parallelism: one process's calls run
     * one after another, so slow effects or a slow network hold everyone up. {@code docs/performance.md}
     * in the project has measurements. Several processes, each with its own group-committing inbox,
     * still run in parallel against one database, with the same guarantees.
     *
     * @param jdbi the business database's Jdbi; not {@code null}
     * @return a builder with default settings
     */
    public static InboxBuilder<PostgresInbox> builder(Jdbi jdbi) {
        Objects.requireNonNull(jdbi, "jdbi");
        return new InboxBuilder<>(CommitMode.PER_CALLER, settings -> new PostgresInbox(jdbi, settings));
    }


}
