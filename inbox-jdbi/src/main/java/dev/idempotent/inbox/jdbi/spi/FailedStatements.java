package dev.idempotent.inbox.jdbi.spi;

import dev.idempotent.inbox.Beta;
import java.sql.SQLException;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.SqlLogger;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * Remembers the last statement that failed on a handle, through Jdbi's {@link SqlLogger}, so that
 * a transaction the database aborted or rolled back under an effect can be blamed on the failure
 * the effect caught. The handle's own logger still sees every statement. On a handle the inbox
 * opened, the watcher goes with the handle; on a caller's handle (a joined call) the store puts the
 * caller's logger back with {@link #stop()}.
 */
@Beta
public final class FailedStatements implements SqlLogger {

    private final SqlStatements statements;
    private final SqlLogger delegate;
    private SQLException last;

    private FailedStatements(SqlStatements statements, SqlLogger delegate) {
        this.statements = statements;
        this.delegate = delegate;
    }

    /**
     * Starts watching {@code handle}'s statements.
     *
     * @param handle the handle an effect will write through
     * @return the watcher
     */
    public static FailedStatements watch(Handle handle) {
        SqlStatements statements = handle.getConfig(SqlStatements.class);
        FailedStatements watcher = new FailedStatements(statements, statements.getSqlLogger());
        statements.setSqlLogger(watcher);
        return watcher;
    }

    /** Puts the handle's own logger back, if this watcher is still the one in place. */
    public void stop() {
        if (statements.getSqlLogger() == this) {
            statements.setSqlLogger(delegate);
        }
    }

    /** {@return the last failure seen, or {@code null} if the effect ran its statements some other way} */
    public SQLException last() {
        return last;
    }

    /** Forgets earlier failures: a savepoint begins a message whose failures are its own. */
    public void forget() {
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
