package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxSettings;
import dev.idempotent.inbox.internal.InboxEngine;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.util.Objects;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * The idempotent inbox on MariaDB (InnoDB), for consumers that run on several machines against one
 * database.
 *
 * <p>Give it the {@link Jdbi} your business tables live in, over your {@code DataSource} (pooled or
 * not), whose connections count affected rows: {@code useAffectedRows=true} in the JDBC URL. Each
 * {@link #apply} takes a connection of its own from it, begins a {@code READ COMMITTED}
 * transaction, claims the id in its table of records ({@code inbox_message} by default) with one
 * {@code INSERT ... ON DUPLICATE KEY UPDATE id = id}, runs the effect with the transaction's
 * {@link Handle} only if the id is new, commits the effect's writes and the inbox row together, and
 * gives the connection back.
 *
 * <pre>{@code
 * Jdbi jdbi = Jdbi.create("jdbc:mariadb://db:3306/shop?useAffectedRows=true", user, password);
 * try (MariaDbInbox inbox = MariaDbInbox.builder(jdbi).name("receipts").build()) {
 *     Outcome<Integer> outcome = inbox.apply("snack-7", Content.of(7),
 *             tx -> tx.execute("UPDATE stock SET total = total + ?", 7));
 * }
 * }</pre>
 *
 * <h2>Concurrent copies of one id</h2>
 *
 * <p>When two calls (in this process or in any other) apply the same id at once, the second one's
 * claim waits on the primary key of the table of records until the first transaction ends. If the
 * first commits, the second returns {@link dev.idempotent.inbox.Outcome.Duplicate} (or
 * {@link dev.idempotent.inbox.Outcome.Conflict} for other content) without running its effect; if
 * the first rolls back, the second claims the id and returns
 * {@link dev.idempotent.inbox.Outcome.Applied}. The wait counts against the busy timeout, which
 * becomes InnoDB's {@code innodb_lock_wait_timeout} for the transaction, in whole seconds rounded
 * up (at least 1); past it the call throws {@link dev.idempotent.inbox.InboxBusyException} and
 * nothing was applied. Calls on different ids do not wait for each other in the inbox: under
 * {@code READ COMMITTED} InnoDB takes no gap locks, so neighbouring ids do not deadlock.
 *
 * <h2>Connections</h2>
 *
 * <p>The connections must come in autocommit mode with no transaction open (the JDBC default, and
 * the default of common pools): Jdbi would silently join an open transaction, so the inbox refuses
 * such a connection with an {@link dev.idempotent.inbox.InboxException}. They must count affected
 * rows, not found rows (the driver's default), or the claim of a stored id would look like a new
 * one: {@link InboxBuilder#build()} checks this and refuses them. The inbox sets its isolation
 * level for each transaction only and puts the session's {@code innodb_lock_wait_timeout} back
 * after each, so a pooled connection goes back as it came. {@link #close()} closes no connection:
 * the {@code Jdbi} and its pool are yours.
 *
 * <h2>Schema</h2>
 *
 * <p>The inbox keeps its tables where its {@link dev.idempotent.inbox.InboxTables} say
 * ({@link InboxBuilder#tables}): by default {@code inbox_schema}, {@code inbox_message} and
 * {@code inbox_horizon} in the connection's database; with a prefix such as {@code orders_},
 * {@code orders_schema} and so on; with {@code inSchema("billing")}, in database {@code billing}
 * (which must exist), every statement naming {@code billing.orders_message}. The tables are InnoDB,
 * {@code ROW_FORMAT=DYNAMIC}, ids in {@code utf8mb4_nopad_bin} so that they compare byte for byte,
 * trailing spaces included, times in epoch milliseconds, stored results in a {@code LONGBLOB}
 * (a result whose statement would not fit the server's {@code max_allowed_packet} fails its call as
 * {@link dev.idempotent.inbox.StoredResultException.Kind#TOO_LARGE} before it is sent).
 *
 * <p>The tables change only by the steps of {@link dev.idempotent.inbox.spi.jdbc.SchemaMigrations},
 * each shipped in this jar as a Flyway migration with the default names (location
 * {@code classpath:dev/idempotent/inbox/mariadb/flyway}, Liquibase changelog
 * {@code dev/idempotent/inbox/mariadb/liquibase/inbox-changelog.xml}) and as a template for any
 * prefix (location {@code classpath:dev/idempotent/inbox/mariadb/flyway-prefixed} with placeholder
 * {@code inbox_table_prefix}, changelog {@code inbox-changelog-prefixed.xml} with the parameter of
 * that name). With {@link dev.idempotent.inbox.SchemaMode#CREATE} (the default) the inbox runs the
 * steps its tables lack, the same templates filled in with its prefix, in the tables' database,
 * under a named lock so that concurrent first uses do not race; over tables at the level it knows it
 * runs no DDL. With {@link dev.idempotent.inbox.SchemaMode#VALIDATE} it never does: it fails with
 * {@link dev.idempotent.inbox.InboxStorageException.Kind#SCHEMA_MISSING}, naming the migrations to
 * run, if the tables are missing or behind. Tables of a newer, incompatible schema version are
 * refused with {@link dev.idempotent.inbox.InboxStorageException.Kind#NEWER_SCHEMA}, naming the
 * release they need; a newer revision of the version it knows (an additive change) is accepted, so
 * a rolling deploy needs no stop.
 *
 * <h2>Failures</h2>
 *
 * <p>Errors are told apart by the server's error number and SQLState. Lock wait timeouts (1205) and
 * deadlocks (1213) in the inbox's own statements throw {@code InboxBusyException}; a read-only
 * server or transaction (1290, 1792), a full disk or table and a lost or refused connection throw
 * {@code InboxStorageException} of kind {@code READ_ONLY}, {@code DISK_FULL} and
 * {@code UNAVAILABLE}. A COMMIT whose answer never came back throws
 * {@link dev.idempotent.inbox.OutcomeUnknownException}. Errors raised by the effect's own statements
 * reach the caller unchanged, as the effect's exception; the transaction is rolled back and nothing
 * was applied. A statement of the effect that fails does not end the transaction, so an effect may
 * catch such an error and go on, except after a deadlock, when InnoDB has rolled the whole
 * transaction back: the inbox then refuses to commit with
 * {@link dev.idempotent.inbox.EffectBrokeTransactionException}, and nothing was recorded.
 *
 * <h2>Batches and retention</h2>
 *
 * <p>{@link #applyAll} runs a batch in one transaction, each message in a savepoint of its own, so a
 * message whose effect fails is undone alone. A deadlock, though, rolls the whole transaction back,
 * so a batch that meets one fails as a whole: nothing of it was applied, and it may be retried. Each
 * purge batch of {@link #retention()} is its own short transaction; purges from several processes at
 * once are safe and leave the latest horizon.
 *
 * <p>MySQL 8 speaks the same SQL, but is not tested; its name for the ids' collation is
 * {@code utf8mb4_0900_bin}, and it has no {@code ADD COLUMN IF NOT EXISTS}, so create the tables
 * from the scripts with that name and those clauses changed first.
 *
 * <p>Thread-safe.
 */
public final class MariaDbInbox extends JdbiInbox {

    private MariaDbInbox(Jdbi jdbi, InboxSettings settings) {
        super(InboxEngine.open(settings, new MariaDbStore(jdbi, settings)), jdbi,
                settings);
    }

    /**
     * A builder for an inbox over {@code jdbi}, which must reach a MariaDB database through
     * connections that count affected rows. By default ({@link CommitMode#PER_CALLER}) each call runs
     * in a transaction of its own, on its own connection and thread, in parallel with the others.
     *
     * <p>With {@link CommitMode#GROUP} the calls of concurrent callers of this process are committed
     * together: they queue in arrival order, and one writer at a time runs the oldest of them (up to
     * {@link InboxBuilder#maxGroupSize}) in one transaction on one connection, each message in a
     * savepoint of its own, and commits once. A failing effect rolls back only its own message.
     * Effects may run on another caller's thread. It pays when many callers write the same business
     * rows or when commits, not statements, bound the rate; it costs parallelism, as on PostgreSQL.
     *
     * @param jdbi the business database's Jdbi; not {@code null}
     * @return a builder with default settings
     */
    public static InboxBuilder<MariaDbInbox> builder(Jdbi jdbi) {
        Objects.requireNonNull(jdbi, "jdbi");
        return new InboxBuilder<>(CommitMode.PER_CALLER, settings -> new MariaDbInbox(jdbi, settings));
    }


}
