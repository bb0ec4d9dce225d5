package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.EncodedResult;
import dev.idempotent.inbox.InboxRecord;
import dev.idempotent.inbox.spi.jdbc.InboxRows;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.sqlite.SQLiteConnection;
import org.sqlite.SQLiteConnectionConfig;

/**
 * The writer connection and the statements every transaction runs on it, prepared once when the
 * connection opens and closed with it. A connection in doubt is discarded with its statements;
 * the next transaction opens a new one and prepares them again.
 */
final class SqliteWriter {

    final Handle handle;
    final SqliteSql sql;
    final PreparedStatement begin;
    final PreparedStatement claim;
    final PreparedStatement select;
    final PreparedStatement horizon;
    final PreparedStatement storeResult;
    final PreparedStatement savepoint;
    final PreparedStatement release;
    final PreparedStatement rollbackTo;
    final PreparedStatement commit;
    final PreparedStatement rollback;
    // Null when the connection is not sqlite-jdbc's own and cannot be unwrapped to it.
    private final SQLiteConnectionConfig driverConfig;
    private final boolean effectsGetKeys;
    // Set when one of the statements below failed: sqlite-jdbc may have closed it.
    private boolean inDoubt;

    SqliteWriter(Handle handle, SqliteSql sql) {
        this.handle = handle;
        this.sql = sql;
        handle.setStatementBuilder(new ReusingStatementBuilder());
        Connection connection = handle.getConnection();
        try {
            driverConfig = connection.isWrapperFor(SQLiteConnection.class)
                    ? connection.unwrap(SQLiteConnection.class).getConnectionConfig() : null;
            effectsGetKeys = driverConfig != null && driverConfig.isGetGeneratedKeys();
            begin = connection.prepareStatement("BEGIN IMMEDIATE");
            claim = connection.prepareStatement(sql.claim);
            select = connection.prepareStatement(sql.select);
            horizon = connection.prepareStatement(sql.selectHorizon);
            storeResult = connection.prepareStatement(sql.storeResult);
            savepoint = connection.prepareStatement("SAVEPOINT inbox_call");
            release = connection.prepareStatement("RELEASE inbox_call");
            rollbackTo = connection.prepareStatement("ROLLBACK TO inbox_call");
            commit = connection.prepareStatement("COMMIT");
            rollback = connection.prepareStatement("ROLLBACK");
        } catch (SQLException e) {
            // Statements prepared so far are closed with the connection, which the caller closes.
            throw SqliteErrors.translate(e, "preparing the inbox's statements");
        }
    }

    /** Closes the statements, then the connection; nothing thrown, the writer is being dropped. */
    void close() {
        for (PreparedStatement statement : new PreparedStatement[] {
                begin, claim, select, horizon, storeResult, savepoint, release, rollbackTo, commit, rollback}) {
            try {
                statement.close();
            } catch (SQLException ignored) {
                // Closing the connection below releases whatever the statement still held.
            }
        }
        SqliteStore.closeQuietly(handle);
    }

    /**
     * Readies the connection for the inbox's own statements. sqlite-jdbc follows every INSERT,
     * by default, with a query of its own for the generated key (a {@code SELECT
     * last_insert_rowid()}, prepared and finalized each time), and matches every other
     * statement's text against a pattern to find out whether it is one: a quarter of a durable
     * call's CPU here, for keys the inbox never reads.
     */
    void forOwnStatements() {
        if (driverConfig != null) {
            driverConfig.setGetGeneratedKeys(false);
        }
    }

    /** Readies the connection for an effect: generated keys as the connection was opened with. */
    void forEffect() {
        if (driverConfig != null) {
            driverConfig.setGetGeneratedKeys(effectsGetKeys);
        }
    }

    /** Runs one of the writer's own prepared statements that returns no rows. */
    void run(PreparedStatement statement, String doing) {
        forOwnStatements();
        try {
            statement.execute();
        } catch (SQLException e) {
            failed();
            throw SqliteErrors.translate(e, doing);
        }
    }

    /** Marks the writer in doubt: one of its own statements failed. */
    void failed() {
        inDoubt = true;
    }

    /** Whether one of its own statements failed, so that the writer must be replaced. */
    boolean inDoubt() {
        return inDoubt;
    }

    /** Executes the bound claim; true if it inserted the row. */
    boolean insert() throws SQLException {
        forOwnStatements();
        return claim.executeUpdate() == 1;
    }

    /** Stores {@code result} on the row of {@code id}; true if there was that row to update. */
    boolean storeResult(String inbox, String id, EncodedResult result) throws SQLException {
        forOwnStatements();
        InboxRows.bindResult(storeResult, result);
        storeResult.setString(4, inbox);
        storeResult.setString(5, id);
        return storeResult.executeUpdate() == 1;
    }

    Optional<InboxRecord> select(String inbox, String id) throws SQLException {
        select.setString(1, inbox);
        select.setString(2, id);
        // Closing the result set resets the statement for its next use; the statement stays open.
        try (ResultSet rs = select.executeQuery()) {
            return rs.next() ? Optional.of(InboxRows.read(rs, SqliteStore.TIME)) : Optional.empty();
        }
    }
}
