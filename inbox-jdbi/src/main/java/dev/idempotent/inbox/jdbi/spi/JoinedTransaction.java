package dev.idempotent.inbox.jdbi.spi;

import dev.idempotent.inbox.Beta;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.spi.PurgeBatch;
import dev.idempotent.inbox.spi.PurgePosition;
import dev.idempotent.inbox.spi.StoreTransaction;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import org.jdbi.v3.core.Handle;

/**
 * The base of a store's joined transaction ({@link dev.idempotent.inbox.spi.InboxStore#join}):
 * the caller owns it, so ending it or purging in it is refused; the store supplies the savepoint,
 * the claim and the reads.
 */
@Beta
public abstract class JoinedTransaction implements StoreTransaction<Handle> {

    /** For subclasses. */
    protected JoinedTransaction() {}

    /**
     * Refuses a connection in autocommit mode, which has no transaction of the caller's to join.
     *
     * @param connection the caller's connection
     * @throws SQLException if its mode cannot be read
     * @throws InboxException if it is in autocommit mode
     */
    public static void requireOpenTransaction(Connection connection) throws SQLException {
        if (connection.getAutoCommit()) {
            throw new InboxException("the connection is in autocommit mode, so there is no transaction of yours to"
                    + " join: turn autocommit off (or use Jdbi's inTransaction) before applying in it, or call"
                    + " apply, which opens a transaction of its own");
        }
    }

    @Override
    public final void raiseHorizon(String inbox, Instant cutoff) {
        throw new IllegalStateException("the inbox never purges in a joined transaction");
    }

    @Override
    public final PurgeBatch deleteOldest(String inbox, Instant cutoff, PurgePosition after, int limit) {
        throw new IllegalStateException("the inbox never purges in a joined transaction");
    }

    @Override
    public final void commit() {
        throw new IllegalStateException("the caller owns a joined transaction; the inbox must not commit it");
    }

    @Override
    public final void rollback() {
        throw new IllegalStateException("the caller owns a joined transaction; the inbox must not roll it back");
    }
}
