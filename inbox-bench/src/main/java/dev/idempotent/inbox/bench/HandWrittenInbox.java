package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Fingerprint;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.sqlite.SQLiteConnection;

/**
 * The baseline: what a careful engineer writes by hand with plain JDBC, with the same SQL and the
 * same durability as the inbox. One sqlite-jdbc connection in autocommit mode, {@code
 * journal_mode=WAL}, {@code synchronous=FULL}; per message {@code BEGIN IMMEDIATE}, the claim
 * {@code INSERT ... ON CONFLICT DO NOTHING} into the inbox's own table, {@code UPDATE stock},
 * {@code COMMIT}. Prepared statements are made once and reused; callers are served by a fair lock,
 * as in the inbox. The row written is the inbox's row, fingerprint included, so both sides store
 * the same bytes. The driver's generated-key query after each INSERT ({@code SELECT
 * last_insert_rowid()}, which sqlite-jdbc runs by default) is turned off, as the inbox turns it off
 * for its claim; {@link #driverGeneratedKeys} turns it back on, to measure the driver's default.
 */
final class HandWrittenInbox implements AutoCloseable {

    static final String CLAIM = """
            INSERT INTO inbox_message (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                       fingerprint, content, received_at)
            VALUES (?, ?, ?, ?, ?, ?, NULL, ?)
            ON CONFLICT (inbox, id) DO NOTHING""";
    static final String SELECT = "SELECT fingerprint_algorithm, content_type, content_type_version, fingerprint,"
            + " received_at FROM inbox_message WHERE inbox = ? AND id = ?";
    static final String UPDATE = "UPDATE stock SET total = total + ? WHERE id = 1";

    private final String inbox;
    private final Connection connection;
    private final ReentrantLock lock = new ReentrantLock(true);
    private final PreparedStatement begin;
    private final PreparedStatement claim;
    private final PreparedStatement select;
    private final PreparedStatement update;
    private final PreparedStatement commit;
    private final PreparedStatement rollback;
    private final PreparedStatement savepoint;
    private final PreparedStatement release;

    HandWrittenInbox(Path file, String inbox) throws SQLException {
        this.inbox = inbox;
        this.connection = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
        try (Statement pragma = connection.createStatement()) {
            pragma.execute("PRAGMA busy_timeout = 5000");
            try (ResultSet mode = pragma.executeQuery("PRAGMA journal_mode = WAL")) {
                if (!mode.next() || !"wal".equalsIgnoreCase(mode.getString(1))) {
                    throw new SQLException("the baseline needs journal_mode=WAL");
                }
            }
            pragma.execute("PRAGMA synchronous = FULL");
        }
        driverGeneratedKeys(false);
        begin = connection.prepareStatement("BEGIN IMMEDIATE");
        claim = connection.prepareStatement(CLAIM);
        select = connection.prepareStatement(SELECT);
        update = connection.prepareStatement(UPDATE);
        commit = connection.prepareStatement("COMMIT");
        rollback = connection.prepareStatement("ROLLBACK");
        savepoint = connection.prepareStatement("SAVEPOINT message");
        release = connection.prepareStatement("RELEASE message");
    }

    /** Whether sqlite-jdbc queries the generated key after each INSERT (its default: yes). */
    void driverGeneratedKeys(boolean on) throws SQLException {
        connection.unwrap(SQLiteConnection.class).getConnectionConfig().setGetGeneratedKeys(on);
    }

    /**
     * One message, one transaction. Returns true when the id was new and the stock changed, false
     * for a stored id (nothing written; the stored fingerprint is read, as a receiver must to tell a
     * duplicate from a conflict).
     */
    boolean apply(String id, long quantity) throws SQLException {
        Fingerprint fingerprint = Content.of(quantity).fingerprint();
        lock.lock();
        try {
            begin.execute();
            try {
                boolean applied = claimAndApply(id, fingerprint, quantity);
                (applied ? commit : rollback).execute();
                return applied;
            } catch (SQLException | RuntimeException e) {
                rollbackAfter(e);
                throw e;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@code ids.size()} messages in one transaction; returns how many were new. Each message is
     * fingerprinted on its own, as a receiver must: real messages carry different content.
     */
    int applyBatch(List<String> ids, long quantity) throws SQLException {
        return applyBatch(ids, quantity, false);
    }

    /**
     * As {@link #applyBatch(List, long)}, with each message inside a {@code SAVEPOINT} of its own
     * when {@code savepoints} is set, as {@code applyAll} does: measures what the savepoints cost.
     */
    int applyBatch(List<String> ids, long quantity, boolean savepoints) throws SQLException {
        lock.lock();
        try {
            begin.execute();
            try {
                int applied = 0;
                for (String id : ids) {
                    if (savepoints) {
                        savepoint.execute();
                    }
                    applied += claimAndApply(id, Content.of(quantity).fingerprint(), quantity) ? 1 : 0;
                    if (savepoints) {
                        release.execute();
                    }
                }
                commit.execute();
                return applied;
            } catch (SQLException | RuntimeException e) {
                rollbackAfter(e);
                throw e;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * The same transaction as {@link #apply}, but every statement prepared afresh and closed, as
     * code does that does not keep statements: measures what statement reuse is worth.
     */
    boolean applyUnprepared(String id, long quantity) throws SQLException {
        Fingerprint fingerprint = Content.of(quantity).fingerprint();
        lock.lock();
        try (Statement plain = connection.createStatement()) {
            plain.execute("BEGIN IMMEDIATE");
            int inserted;
            try (PreparedStatement fresh = connection.prepareStatement(CLAIM)) {
                bindClaim(fresh, id, fingerprint);
                inserted = fresh.executeUpdate();
            }
            if (inserted == 1) {
                try (PreparedStatement fresh = connection.prepareStatement(UPDATE)) {
                    fresh.setLong(1, quantity);
                    fresh.executeUpdate();
                }
            }
            plain.execute(inserted == 1 ? "COMMIT" : "ROLLBACK");
            return inserted == 1;
        } finally {
            lock.unlock();
        }
    }

    private boolean claimAndApply(String id, Fingerprint fingerprint, long quantity) throws SQLException {
        bindClaim(claim, id, fingerprint);
        if (claim.executeUpdate() == 1) {
            update.setLong(1, quantity);
            update.executeUpdate();
            return true;
        }
        select.setString(1, inbox);
        select.setString(2, id);
        try (ResultSet stored = select.executeQuery()) {
            if (!stored.next() || stored.getBytes(4) == null) {
                throw new SQLException("the claim of " + id + " conflicted but no row could be read");
            }
        }
        return false;
    }

    private void bindClaim(PreparedStatement statement, String id, Fingerprint fingerprint) throws SQLException {
        statement.setString(1, inbox);
        statement.setString(2, id);
        statement.setInt(3, fingerprint.algorithm());
        statement.setString(4, fingerprint.contentType().name());
        statement.setInt(5, fingerprint.contentType().version());
        statement.setBytes(6, fingerprint.digest());
        statement.setLong(7, System.currentTimeMillis());
    }

    private void rollbackAfter(Exception failure) {
        try {
            rollback.execute();
        } catch (SQLException rollbackFailure) {
            failure.addSuppressed(rollbackFailure);
        }
    }

    @Override
    public void close() throws SQLException {
        connection.close();
    }
}
