package dev.idempotent.inbox.bench;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Fingerprint;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import javax.sql.DataSource;

/**
 * The PostgreSQL baseline: the inbox's claim SQL written by hand with plain JDBC, one transaction
 * per message on a connection borrowed from the same kind of pool the inbox uses: the claim
 * {@code INSERT ... ON CONFLICT DO NOTHING}, whose row count tells whether the id was new,
 * {@code UPDATE stock} if it was,
 * otherwise a read of the stored row, then {@code COMMIT}. Statements are prepared by name on each
 * borrowed connection, which the PostgreSQL driver caches and turns into server-side prepared
 * statements after a few uses. It leaves out what the inbox adds to every transaction, its
 * isolation level and lock timeout, which the inbox sends with its own {@code BEGIN} in front of
 * its claim, in the same round trip; {@link #applyWithSettings} begins as the inbox does.
 */
final class HandWrittenPostgres {

    static final String CLAIM = """
            INSERT INTO inbox_message (inbox, id, fingerprint_algorithm, content_type, content_type_version,
                                       fingerprint, content, received_at)
            VALUES (?, ?, ?, ?, ?, ?, NULL, ?)
            ON CONFLICT (inbox, id) DO NOTHING""";
    static final String SELECT = "SELECT fingerprint_algorithm, content_type, content_type_version, fingerprint,"
            + " received_at FROM inbox_message WHERE inbox = ? AND id = ?";
    static final String UPDATE = "UPDATE stock SET total = total + ? WHERE id = 1";

    /**
     * How the inbox begins its transaction with its default busy timeout, in front of its claim on
     * a connection still in autocommit mode, for {@link #applyWithSettings}.
     */
    static final String BEGIN = "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '5000ms'; ";

    private final DataSource pool;
    private final String inbox;

    HandWrittenPostgres(DataSource pool, String inbox) {
        this.pool = pool;
        this.inbox = inbox;
    }

    /** One message, one transaction; true when the id was new and the stock changed. */
    boolean apply(String id, long quantity) throws SQLException {
        return apply(id, quantity, false);
    }

    /**
     * The same, begun as the inbox begins: its {@code BEGIN} with the isolation level and the lock
     * timeout sent in front of the claim, in its round trip, then autocommit off, which sends
     * nothing. Tells what the inbox's way of beginning costs from what the rest of the inbox costs.
     */
    boolean applyWithSettings(String id, long quantity) throws SQLException {
        return apply(id, quantity, true);
    }

    private boolean apply(String id, long quantity, boolean withSettings) throws SQLException {
        Fingerprint fingerprint = Content.of(quantity).fingerprint();
        try (Connection connection = pool.getConnection()) {
            try {
                boolean applied;
                if (withSettings) {
                    boolean claimed;
                    try {
                        claimed = claim(connection, id, fingerprint, true);
                    } finally {
                        connection.setAutoCommit(false);
                    }
                    applied = afterClaim(connection, id, quantity, claimed);
                } else {
                    connection.setAutoCommit(false);
                    applied = applyIn(connection, id, quantity, fingerprint);
                }
                connection.commit();
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

    /**
     * The claim and the stock update (or the read of the stored row) in the transaction open on
     * {@code connection}, which the caller commits: what a service writes by hand inside its own
     * transaction.
     */
    boolean applyIn(Connection connection, String id, long quantity) throws SQLException {
        return applyIn(connection, id, quantity, Content.of(quantity).fingerprint());
    }

    private boolean applyIn(Connection connection, String id, long quantity, Fingerprint fingerprint)
            throws SQLException {
        return afterClaim(connection, id, quantity, claim(connection, id, fingerprint, false));
    }

    private boolean afterClaim(Connection connection, String id, long quantity, boolean applied) throws SQLException {
        if (applied) {
            try (PreparedStatement update = connection.prepareStatement(UPDATE)) {
                update.setLong(1, quantity);
                update.executeUpdate();
            }
        } else {
            readStored(connection, id);
        }
        return applied;
    }

    private boolean claim(Connection connection, String id, Fingerprint fingerprint, boolean withBegin)
            throws SQLException {
        try (PreparedStatement claim = connection.prepareStatement(withBegin ? BEGIN + CLAIM : CLAIM)) {
            claim.setString(1, inbox);
            claim.setString(2, id);
            claim.setInt(3, fingerprint.algorithm());
            claim.setString(4, fingerprint.contentType().name());
            claim.setInt(5, fingerprint.contentType().version());
            claim.setBytes(6, fingerprint.digest());
            claim.setObject(7, OffsetDateTime.ofInstant(Instant.now().truncatedTo(ChronoUnit.MILLIS), ZoneOffset.UTC));
            return inserted(claim);
        }
    }

    /**
     * Runs {@code claim}, an {@code INSERT ... ON CONFLICT DO NOTHING} with any settings in front
     * of it, and tells whether it inserted the row: the settings answer first, the insert's row
     * count is the last.
     */
    static boolean inserted(PreparedStatement claim) throws SQLException {
        claim.execute();
        int inserted = claim.getUpdateCount();
        while (claim.getMoreResults() || claim.getUpdateCount() != -1) {
            inserted = claim.getUpdateCount();
        }
        return inserted == 1;
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
