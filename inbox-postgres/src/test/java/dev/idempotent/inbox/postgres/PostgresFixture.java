package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.testkit.InboxFixture;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HexFormat;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A schema of its own in the test database, created with a random name and dropped with everything
 * in it on close, so runs never see each other's rows. Every connection of {@link #jdbi()} has the
 * schema as its {@code search_path}. The server is 127.0.0.1:5432, database {@code test}, user
 * {@code postgres} with trust authentication, unless {@code INBOX_PG_HOST}, {@code INBOX_PG_PORT},
 * {@code INBOX_PG_DATABASE} or {@code INBOX_PG_USER} say otherwise.
 *
 * <p>By default the inboxes of {@link #builder()} keep their tables under prefix {@value #PREFIX}
 * in a schema of their own ({@link #tables()}), which no connection's {@code search_path} names,
 * so every suite run on this fixture proves that every statement of the inbox names its tables
 * qualified; the tables are created (or migrated) when the fixture opens. The testkit's suites
 * read the records by the names {@link #tables()} gives. {@link #withDefaultNames()} keeps the
 * default names in the fixture's schema.
 */
final class PostgresFixture implements InboxFixture {

    /** The prefix of the tables of a fixture on renamed tables. */
    static final String PREFIX = "it_";

    static final String HOST = environment("INBOX_PG_HOST", "127.0.0.1");
    static final int PORT = Integer.parseInt(environment("INBOX_PG_PORT", "5432"));
    static final String DATABASE = environment("INBOX_PG_DATABASE", "test");
    static final String USER = environment("INBOX_PG_USER", "postgres");

    private static final SecureRandom RANDOM = new SecureRandom();

    /** How a fixture's tables come about. */
    enum Tables {
        /** Prefix {@value #PREFIX} in a schema of their own, made by an inbox of schema mode CREATE. */
        RENAMED,
        /** As {@link #RENAMED}, made by Flyway from the templates' location. */
        RENAMED_BY_FLYWAY,
        /** The default names in the fixture's schema, made by the first inbox built. */
        DEFAULT
    }

    private final String schema;
    private final InboxTables tables;
    private final Jdbi admin;
    private final Jdbi jdbi;
    private final Jdbi inboxJdbi;
    private final boolean groupCommit;

    PostgresFixture() {
        this(false);
    }

    /** With {@code groupCommit}, {@link #builder()} builds group-committing inboxes. */
    PostgresFixture(boolean groupCommit) {
        this(groupCommit, Tables.RENAMED);
    }

    PostgresFixture(boolean groupCommit, Tables kind) {
        this.groupCommit = groupCommit;
        byte[] suffix = new byte[6];
        RANDOM.nextBytes(suffix);
        this.schema = "inbox_test_" + HexFormat.of().formatHex(suffix);
        this.admin = Jdbi.create(dataSource(PORT, null));
        admin.useHandle(handle -> handle.execute("CREATE SCHEMA " + schema));
        if (kind == Tables.DEFAULT) {
            this.tables = InboxTables.defaults();
            this.jdbi = jdbi("");
            this.inboxJdbi = jdbi;
            return;
        }
        this.tables = InboxTables.prefix(PREFIX).inSchema(schema + "_tables");
        admin.useHandle(handle -> handle.execute("CREATE SCHEMA " + tables.schema().orElseThrow()));
        this.jdbi = jdbi("");
        this.inboxJdbi = Jdbi.create(dataSource(PORT, "-c search_path=" + schema));
        if (kind == Tables.RENAMED_BY_FLYWAY) {
            Migrations.flywayPrefixed(this, tables.schema().orElseThrow(), PREFIX);
        } else {
            PostgresInbox.builder(inboxJdbi).tables(tables).build().close();
        }
    }

    /** A fixture whose inboxes keep the default names, in the fixture's schema, created on first use. */
    static PostgresFixture withDefaultNames() {
        return new PostgresFixture(false, Tables.DEFAULT);
    }

    /** Where the inboxes of {@link #builder()} keep their tables. */
    @Override
    public InboxTables tables() {
        return tables;
    }

    /** The {@code search_path} of the fixture's connections, for a data source of a test's own. */
    String searchPath() {
        return schema;
    }

    private static String environment(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** The schema this fixture works in. */
    String schema() {
        return schema;
    }

    /** A Jdbi without the fixture's search_path, for server-wide queries and clean-up. */
    Jdbi admin() {
        return admin;
    }

    /**
     * A new Jdbi over the fixture's schema whose connections also start with the server settings in
     * {@code options}, such as {@code -c default_transaction_read_only=on}.
     */
    Jdbi jdbi(String options) {
        return jdbiVia(PORT, options);
    }

    /** A new Jdbi over the fixture's schema that connects to {@code port} (a relay in front of the server). */
    Jdbi jdbiVia(int port, String options) {
        return Jdbi.create(dataSource(port, "-c search_path=" + searchPath() + " " + options));
    }

    /** A data source for the test database at {@code port}, plain TCP so a proxy can read it. */
    static PGSimpleDataSource dataSource(int port, String options) {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setServerNames(new String[] {HOST});
        dataSource.setPortNumbers(new int[] {port});
        dataSource.setDatabaseName(DATABASE);
        dataSource.setUser(USER);
        dataSource.setSslMode("disable");
        dataSource.setGssEncMode("disable");
        dataSource.setConnectTimeout(10);
        dataSource.setApplicationName("inbox-postgres-tests");
        if (options != null) {
            dataSource.setOptions(options.strip());
        }
        return dataSource;
    }

    @Override
    public Jdbi jdbi() {
        return jdbi;
    }

    @Override
    public InboxBuilder<PostgresInbox> builder() {
        InboxBuilder<PostgresInbox> builder = PostgresInbox.builder(inboxJdbi).tables(tables);
        return groupCommit ? builder.commitMode(CommitMode.GROUP) : builder;
    }

    /** Another connection inserts the claim of {@code id} and keeps its transaction open. */
    @Override
    public HeldLock holdWriteLock(String inbox, String id) {
        Handle handle = jdbi.open();
        try {
            handle.begin();
            handle.execute("""
                    INSERT INTO %s (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                               fingerprint, content, received_at)
                    VALUES (?, ?, 1, 'held', 1, ?, NULL, now())""".formatted(tables.messageTable()), inbox, id,
                    new byte[32]);
        } catch (RuntimeException e) {
            handle.close();
            throw e;
        }
        return () -> {
            try {
                handle.rollback();
            } finally {
                handle.close();
            }
        };
    }

    @Override
    public void insertReceivedRows(String inbox, String prefix, int count, Instant receivedAt) {
        jdbi.useHandle(handle -> handle.execute("""
                INSERT INTO %s (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                           fingerprint, received_at)
                SELECT ?, ? || n, 1, 'inbox.int64', 1, ?, ? FROM generate_series(0, ? - 1) AS n"""
                        .formatted(tables.messageTable()),
                inbox, prefix, new byte[32], OffsetDateTime.ofInstant(receivedAt, ZoneOffset.UTC), count));
        // Autovacuum analyzes a table long before it holds this many rows in production; right
        // after a bulk insert the planner would still think it nearly empty.
        jdbi.useHandle(handle -> handle.execute("ANALYZE " + tables.messageTable()));
    }

    @Override
    public boolean failedStatementAbortsTransaction() {
        return true;
    }

    @Override
    public void close() {
        admin.useHandle(handle -> handle.execute("DROP SCHEMA " + schema
                + tables.schema().map(tablesSchema -> ", " + tablesSchema).orElse("") + " CASCADE"));
    }
}
