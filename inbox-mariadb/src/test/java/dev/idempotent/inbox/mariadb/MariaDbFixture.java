package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.testkit.InboxFixture;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.HexFormat;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * A database of its own on the test server, created with a random name and dropped with everything
 * in it on close, so runs never see each other's rows. Every connection of {@link #jdbi()} has it as
 * its default database and counts affected rows.
 *
 * <p>By default the inboxes {@link #builder()} builds keep their tables elsewhere: prefix
 * {@value #PREFIX} in a second database of the fixture's ({@link #tables()}), so every suite run on
 * the fixture proves that each statement of the store names its tables as {@code InboxTables} says,
 * qualified; nothing of the inbox's is in the fixture's own database, so a statement of the store
 * that named a table unqualified would fail. The testkit reads the records by the names
 * {@link #tables()} gives. {@link #defaultNames()} builds a fixture whose inboxes keep the default
 * names. The server is 127.0.0.1:3306, user {@code root}
 * with an empty password, unless {@code INBOX_MARIADB_HOST}, {@code INBOX_MARIADB_PORT},
 * {@code INBOX_MARIADB_USER} or {@code INBOX_MARIADB_PASSWORD} say otherwise.
 */
final class MariaDbFixture implements InboxFixture {

    static final String HOST = environment("INBOX_MARIADB_HOST", "127.0.0.1");
    static final int PORT = Integer.parseInt(environment("INBOX_MARIADB_PORT", "3306"));
    static final String USER = environment("INBOX_MARIADB_USER", "root");
    static final String PASSWORD = environment("INBOX_MARIADB_PASSWORD", "");

    /** The table prefix of the fixture's inboxes, unless built with the default names. */
    static final String PREFIX = "ibx_";

    private static final SecureRandom RANDOM = new SecureRandom();

    private final String database;
    private final InboxTables tables;
    private final Jdbi admin;
    private final Jdbi jdbi;
    private final boolean groupCommit;

    MariaDbFixture() {
        this(false);
    }

    /** With {@code groupCommit}, {@link #builder()} builds group-committing inboxes. */
    MariaDbFixture(boolean groupCommit) {
        this(groupCommit, true, true);
    }

    /**
     * @param groupCommit whether {@link #builder()} builds group-committing inboxes
     * @param renamed whether the inboxes keep their tables under prefix {@value #PREFIX} in a second
     *     database, rather than under the default names in the fixture's database
     * @param create whether renamed tables are created now, by an inbox of schema mode CREATE; if
     *     not, the test creates them (with a migration tool)
     */
    MariaDbFixture(boolean groupCommit, boolean renamed, boolean create) {
        this.groupCommit = groupCommit;
        byte[] suffix = new byte[6];
        RANDOM.nextBytes(suffix);
        this.database = "inbox_test_" + HexFormat.of().formatHex(suffix);
        this.tables = renamed ? InboxTables.prefix(PREFIX).inSchema(database + "_tables") : InboxTables.defaults();
        this.admin = Jdbi.create(url(PORT, "", ""), USER, PASSWORD);
        admin.useHandle(handle -> handle.execute("CREATE DATABASE " + database + " CHARACTER SET utf8mb4"));
        this.jdbi = jdbi("");
        if (renamed) {
            admin.useHandle(handle -> handle.execute("CREATE DATABASE " + tablesDatabase() + " CHARACTER SET utf8mb4"));
            if (create) {
                MariaDbInbox.builder(jdbi).tables(tables).build().close();
            }
        }
    }

    /** A fixture whose inboxes keep the default names, in the fixture's database. */
    static MariaDbFixture defaultNames() {
        return new MariaDbFixture(false, false, false);
    }

    /** Where the fixture's inboxes keep their tables. */
    @Override
    public InboxTables tables() {
        return tables;
    }

    /** The database the tables are in: a second one of the fixture's, unless they have the default names. */
    String tablesDatabase() {
        return tables.schema().orElse(database);
    }

    private static String environment(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private static String url(int port, String database, String options) {
        // Plain TCP (the driver's default), so that a relay can read the protocol.
        return "jdbc:mariadb://" + HOST + ":" + port + "/" + database + "?connectTimeout=10000" + options;
    }

    /** The database this fixture works in. */
    String database() {
        return database;
    }

    /** A Jdbi without a default database, for server-wide queries and clean-up. */
    Jdbi admin() {
        return admin;
    }

    /**
     * A new Jdbi over the fixture's database whose URL ends with {@code options} (each starting
     * with {@code &}) after {@code useAffectedRows=true}.
     */
    Jdbi jdbi(String options) {
        return Jdbi.create(url(options), USER, PASSWORD);
    }

    /**
     * The URL of the fixture's database, ending with {@code options} (each starting with
     * {@code &}) after {@code useAffectedRows=true}.
     */
    String url(String options) {
        return url(PORT, database, "&useAffectedRows=true" + options);
    }

    /** A new Jdbi over the fixture's database at {@code port} (a relay in front of the server), with exactly {@code options}. */
    Jdbi jdbiVia(int port, String options) {
        return Jdbi.create(url(port, database, options), USER, PASSWORD);
    }

    /** The URL of the fixture's database at {@code port} (a relay in front of the server), with exactly {@code options}. */
    String jdbiViaUrl(int port, String options) {
        return url(port, database, options);
    }

    @Override
    public Jdbi jdbi() {
        return jdbi;
    }

    @Override
    public InboxBuilder<MariaDbInbox> builder() {
        InboxBuilder<MariaDbInbox> builder = MariaDbInbox.builder(jdbi).tables(tables);
        return groupCommit ? builder.commitMode(CommitMode.GROUP) : builder;
    }

    /** Another connection inserts the claim of {@code id} and keeps its transaction open. */
    @Override
    public HeldLock holdWriteLock(String inbox, String id) {
        Handle handle = jdbi.open();
        try {
            handle.begin();
            handle.execute("INSERT INTO " + tables.messageTable() + """
                     (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                               fingerprint, content, received_at)
                    VALUES (?, ?, 1, 'held', 1, ?, NULL, 0)""", inbox, id, new byte[32]);
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
        jdbi.useHandle(handle -> handle.execute("SET STATEMENT max_recursive_iterations = ? FOR INSERT INTO "
                + tables.messageTable() + """
                 (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                           fingerprint, received_at)
                WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
                SELECT ?, CONCAT(?, i), 1, 'inbox.int64', 1, ?, ? FROM n""",
                count + 1, count, inbox, prefix, new byte[32], receivedAt.toEpochMilli()));
        jdbi.useHandle(handle -> handle.execute("ANALYZE TABLE " + tables.messageTable()));
    }

    @Override
    public void close() {
        admin.useHandle(handle -> {
            handle.execute("DROP DATABASE " + database);
            if (!tables.isDefault()) {
                handle.execute("DROP DATABASE IF EXISTS " + tablesDatabase());
            }
        });
    }
}
