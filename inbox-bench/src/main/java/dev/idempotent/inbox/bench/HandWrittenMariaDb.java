package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Fingerprint;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The MariaDB baseline: the inbox's claim SQL written by hand with plain JDBC, one transaction per
 * message on a connection borrowed from the same kind of pool the inbox uses: the claim
 * {@code INSERT ... ON DUPLICATE KEY UPDATE id = id} (one affected row if the id was new),
 * {@code UPDATE stock} if it was, otherwise a read of the stored row, then {@code COMMIT}. Its pool
 * hands out connections already at {@code READ COMMITTED}, so it sends neither the isolation level
 * nor the lock wait timeout that the inbox sets for each of its transactions, nor the savepoint
 * around the effect; {@link #applyWithSettings} sends all of them, as the inbox does.
 */
final class HandWrittenMariaDb {

    static final String CLAIM = """
            INSERT INTO inbox_message (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                       fingerprint, content, received_at)
            VALUES (?, ?, ?, ?, ?, ?, NULL, ?)
            ON DUPLICATE KEY UPDATE id = id""";
    static final String SELECT = HandWrittenPostgres.SELECT;
    static final String UPDATE = HandWrittenPostgres.UPDATE;

    /** What the inbox sends after beginning, with its default busy timeout, one statement each. */
    static final String[] SETTINGS = {"SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
        "SET @inbox_lock_wait_timeout = @@SESSION.innodb_lock_wait_timeout, SESSION innodb_lock_wait_timeout = 5"};
    /** What the inbox sends after the commit to put the session's lock wait timeout back. */
    static final String RESTORE = "SET SESSION innodb_lock_wait_timeout"
            + " = COALESCE(@inbox_lock_wait_timeout, @@SESSION.innodb_lock_wait_timeout), @inbox_lock_wait_timeout = NULL";

    private final DataSource pool;
    private final String inbox;

    HandWrittenMariaDb(DataSource pool, String inbox) {
        this.pool = pool;
        this.inbox = inbox;
    }

    /** One message, one transaction; true when the id was new and the stock changed. */
    boolean apply(String id, long quantity) throws SQLException {
        return apply(id, quantity, false);
    }

    /**
     * The same, with the statements the inbox adds sent as it sends them: the isolation level and
     * lock wait timeout after beginning, a savepoint around the effect, the timeout put back after the
     * commit. Tells what those statements cost from what the rest of the inbox costs.
     */
    boolean applyWithSettings(String id, long quantity) throws SQLException {
        return apply(id, quantity, true);
    }

    private boolean apply(String id, long quantity, boolean withSettings) throws SQLException {
        Fingerprint fingerprint = Content.of(quantity).fingerprint();
        try (Connection connection = pool.getConnection()) {
            connection.setAutoCommit(false);
            try {
                if (withSettings) {
                    for (String setting : SETTINGS) {
                        execute(connection, setting);
                    }
                }
                boolean applied = claim(connection, id, fingerprint);
                if (applied) {
                    if (withSettings) {
                        execute(connection, "SAVEPOINT inbox_guard");
                    }
                    try (PreparedStatement update = connection.prepareStatement(UPDATE)) {
                        update.setLong(1, quantity);
                        update.executeUpdate();
                    }
                    if (withSettings) {
                        execute(connection, "RELEASE SAVEPOINT inbox_guard");
                    }
                } else {
                    readStored(connection, id);
                }
                connection.commit();
                if (withSettings) {
                    execute(connection, RESTORE);
                }
                return applied;
            } catch (SQLException | RuntimeException e) {
                try {
                    connection.rollback();
                } catch (SQLException rollbackFailure) {
                    e.addSuppressed(rollbackFailure);
                }
                throw e;
            } finally {
                connection.setAutoCommit(true);
            }
        }
    }

    private static void execute(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private boolean claim(Connection connection, String id, Fingerprint fingerprint) throws SQLException {
        try (PreparedStatement claim = connection.prepareStatement(CLAIM)) {
            claim.setString(1, inbox);
            claim.setString(2, id);
            claim.setInt(3, fingerprint.algorithm());
            claim.setString(4, fingerprint.contentType().name());
            claim.setInt(5, fingerprint.contentType().version());
            claim.setBytes(6, fingerprint.digest());
            claim.setLong(7, System.currentTimeMillis());
            // Counts affected rows (useAffectedRows=true): 0 when the id was stored already.
            return claim.executeUpdate() == 1;
        }
    }

    private void readStored(Connection connection, String id) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(SELECT)) {
            select.setString(1, inbox);
            select.setString(2, id);
            try (ResultSet stored = select.executeQuery()) {
                if (!stored.next() || stored.getBytes(4) == null) {
                    throw new SQLException("the claim of " + id + " conflicted but no row could be read");
                }
            }
        }
    }
}
