package dev.idempotent.inbox.jdbi;

import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.jdbi.spi.EffectGuard;
import java.sql.Connection;
import org.jdbi.v3.core.ConnectionFactory;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Handles;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;

/**
 * Jdbi handles over connections the caller owns, for the effects of joined calls made with a plain
 * JDBC {@link Connection}. One Jdbi serves every call of an inbox: it hands out the connection the
 * calling thread passed in, never closes it, and lets a handle be closed with the caller's
 * transaction still open, which is the point.
 */
final class CallerConnections {

    private final ThreadLocal<Connection> passed = new ThreadLocal<>();
    private final Jdbi jdbi;

    CallerConnections() {
        jdbi = Jdbi.create(new ConnectionFactory() {
            @Override
            public Connection openConnection() {
                Connection connection = passed.get();
                if (connection == null) {
                    throw new IllegalStateException("a caller's connection is opened only through CallerConnections.open");
                }
                return connection;
            }

            @Override
            public void closeConnection(Connection connection) {
                // The caller's: it stays open, and its transaction with it.
            }
        });
        jdbi.getConfig(Handles.class).setForceEndTransactions(false);
        EffectGuard.install(jdbi);
    }

    /** A handle over {@code connection}; closing it leaves the connection and its transaction as they are. */
    Handle open(Connection connection) {
        passed.set(connection);
        try {
            return jdbi.open();
        } catch (JdbiException e) {
            throw new InboxException("the caller's connection could not be wrapped in a Jdbi handle: " + e.getMessage(), e);
        } finally {
            passed.remove();
        }
    }
}
