package dev.idempotent.inbox.mariadb;

import java.sql.SQLException;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.SqlLogger;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * Remembers the last statement that failed on a handle, through Jdbi's {@link SqlLogger}, so that
 * a transaction MariaDB rolled back under an effect (a deadlock the effect caught and went on
 * from) can be blamed on the failure the effect caught. The handle's configuration
 * is its own copy of the Jdbi's and the handle is closed with the transaction, so the user's
 * logger, which still sees every statement, is left as it was.
 */
final class FailedStatements implements SqlLogger {

    private final SqlLogger delegate;
    private SQLException last;

    private FailedStatements(SqlLogger delegate) {
        this.delegate = delegate;
    }

    static FailedStatements watch(Handle handle) {
        SqlStatements statements = handle.getConfig(SqlStatements.class);
        FailedStatements watcher = new FailedStatements(statements.getSqlLogger());
        statements.setSqlLogger(watcher);
        return watcher;
    }

    /** The last failure seen, or {@code null} if the effect ran its statements some other way. */
    SQLException last() {
        return last;
    }

    /** Forgets earlier failures: a savepoint begins a message whose failures are its own. */
    void forget() {
        last = null;
    }

    @Override
    public void logBeforeExecution(StatementContext context) {
        delegate.logBeforeExecution(context);
    }

    @Override
    public void logAfterExecution(StatementContext context) {
        delegate.logAfterExecution(context);
    }

    @Override
    public void logException(StatementContext context, SQLException ex) {
        last = ex;
        delegate.logException(context, ex);
    }
}
