package dev.idempotent.inbox.sqlite;

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.statement.DefaultStatementBuilder;
import org.jdbi.v3.core.statement.StatementBuilder;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * Keeps the prepared statements that effects run through the writer's {@link
 * org.jdbi.v3.core.Handle} for the next message, instead of preparing and finalizing them on every
 * call: an effect runs the same few statements for every message, and preparing one cost about as
 * much as the whole claim. Jdbi closes a statement through {@link #close(Connection, String,
 * Statement)}; a plain statement with no driver options set comes back here, its parameters
 * cleared, and the next request for the same SQL gets it. A statement in use is never handed out
 * twice. Anything else (generated keys, updatable result sets, callable statements, statements
 * whose limits were changed) is prepared and closed as Jdbi's default builder does.
 *
 * <p>Used by the writer's thread only, under the store's write lock.
 */
final class ReusingStatementBuilder implements StatementBuilder {

    // Enough for any effect's working set; beyond it the least recently used statement is closed.
    private static final int MAX_IDLE = 32;

    private final StatementBuilder fallback = new DefaultStatementBuilder();
    private final Set<PreparedStatement> inUse = Collections.newSetFromMap(new IdentityHashMap<>());
    private final LinkedHashMap<String, PreparedStatement> idle = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, PreparedStatement> eldest) {
            if (size() > MAX_IDLE) {
                closeQuietly(eldest.getValue());
                return true;
            }
            return false;
        }
    };

    @Override
    public Statement create(Connection connection, StatementContext context) throws SQLException {
        return fallback.create(connection, context);
    }

    @Override
    public PreparedStatement create(Connection connection, String sql, StatementContext context)
            throws SQLException {
        if (context.isReturningGeneratedKeys() || context.isConcurrentUpdatable()) {
            return fallback.create(connection, sql, context);
        }
        PreparedStatement statement = idle.remove(sql);
        if (statement == null || statement.isClosed() || statement.getConnection() != connection) {
            statement = connection.prepareStatement(sql, java.sql.ResultSet.TYPE_FORWARD_ONLY,
                    java.sql.ResultSet.CONCUR_READ_ONLY);
        }
        inUse.add(statement);
        return statement;
    }

    @Override
    public CallableStatement createCall(Connection connection, String sql, StatementContext context)
            throws SQLException {
        return fallback.createCall(connection, sql, context);
    }

    @Override
    public void close(Connection connection, String sql, Statement statement) throws SQLException {
        if (!(statement instanceof PreparedStatement prepared) || !inUse.remove(prepared)) {
            fallback.close(connection, sql, statement);
            return;
        }
        boolean reusable = !prepared.isClosed() && !idle.containsKey(sql) && prepared.getMaxRows() == 0
                && prepared.getFetchSize() == 0 && prepared.getQueryTimeout() == 0 && prepared.getMaxFieldSize() == 0;
        if (!reusable) {
            prepared.close();
            return;
        }
        prepared.clearParameters();
        idle.put(sql, prepared);
    }

    /** Closes every statement kept; the connection is about to close too. */
    @Override
    public void close(Connection connection) {
        idle.values().forEach(ReusingStatementBuilder::closeQuietly);
        idle.clear();
        inUse.forEach(ReusingStatementBuilder::closeQuietly);
        inUse.clear();
    }

    private static void closeQuietly(Statement statement) {
        try {
            statement.close();
        } catch (SQLException ignored) {
            // Finalizing a statement fails only if the connection is gone, which frees it anyway.
        }
    }
}
