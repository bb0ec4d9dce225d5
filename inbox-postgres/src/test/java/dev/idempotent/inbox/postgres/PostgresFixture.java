package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.InboxBuilder;
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
 */
final class PostgresFixture implements InboxFixture {

    static final String HOST = environment("INBOX_PG_HOST", "127.0.0.1");
    static final int PORT = Integer.parseInt(environment("INBOX_PG_PORT", "5432"));
    static final String DATABASE = environment("INBOX_PG_DATABASE", "test");
    static final String USER = environment("INBOX_PG_USER", "postgres");

    private static final SecureRandom RANDOM = new SecureRandom();

    private final String schema;
    private final Jdbi admin;
    private final Jdbi jdbi;
    private final boolean groupCommit;

    PostgresFixture() {
        this(false);
    }

    /** With {@code groupCommit}, {@link #builder()} builds group-committing inboxes. */
    PostgresFixture(boolean groupCommit) {
        this.groupCommit = groupCommit;
        byte[] suffix = new byte[6];
        RANDOM.nextBytes(suffix);
        this.schema = "inbox_test_" + HexFormat.of().formatHex(suffix);
        this.admin = Jdbi.create(dataSource(PORT, null));
        admin.useHandle(handle -> handle.execute("CREATE SCHEMA " + schema));
        this.jdbi = jdbi("");
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
        return Jdbi.create(dataSource(port, "-c search_path=" + schema + " " + options));
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
        return groupCommit ? PostgresInbox.builder(jdbi).commitMode(CommitMode.GROUP) : PostgresInbox.builder(jdbi);
    }

    /** Another connection inserts the claim of {@code id} and keeps its transaction open. */
    @Override
    public HeldLock holdWriteLock(String inbox, String id) {
        Handle handle = jdbi.open();
        try {
            handle.begin();
            handle.execute("""
                    INSERT INTO inbox_message (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                               fingerprint, content, received_at)
                    VALUES (?, ?, 1, 'held', 1, ?, NULL, now())""", inbox, id, new byte[32]);
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
                INSERT INTO inbox_message (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                           fingerprint, received_at)
                SELECT ?, ? || n, 1, 'inbox.int64', 1, ?, ? FROM generate_series(0, ? - 1) AS n""",
                inbox, prefix, new byte[32], OffsetDateTime.ofInstant(receivedAt, ZoneOffset.UTC), count));
        // Autovacuum analyzes a table long before it holds this many rows in production; right
        // after a bulk insert the planner would still think it nearly empty.
        jdbi.useHandle(handle -> handle.execute("ANALYZE inbox_message"));
    }

    @Override
    public boolean failedStatementAbortsTransaction() {
        return true;
    }

    @Override
    public void close() {
        admin.useHandle(handle -> handle.execute("DROP SCHEMA " + schema + " CASCADE"));
    }
}
