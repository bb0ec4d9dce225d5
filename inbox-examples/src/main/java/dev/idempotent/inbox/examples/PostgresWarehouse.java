package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.postgres.PostgresInbox;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Opens the warehouse in a PostgreSQL database that several receiver processes share: table
 * {@code stock} holds a single row with the running {@code total}, and the inbox's table
 * {@code inbox_message} sits beside it in the same schema, so that the two change in one
 * transaction, whichever process receives the shipment.
 *
 * <p>The tables live in the first schema of the connection's {@code search_path}; give
 * {@code ?currentSchema=NAME} in the URL to choose another than {@code public}.
 */
public final class PostgresWarehouse {

    /** The inbox name the warehouse receives shipments under, the same as on SQLite. */
    public static final String INBOX = InboxWarehouse.INBOX;

    private PostgresWarehouse() {}

    /**
     * Opens the warehouse in the database {@code url} names, creating its tables if absent.
     *
     * @param url {@code postgresql://HOST:PORT/DB?user=...} or the same with {@code jdbc:} in front;
     *     any parameter the PostgreSQL JDBC driver knows may follow
     * @param settings adjusts the inbox's settings (retention, listener, ...)
     * @throws IllegalArgumentException if {@code url} is not a PostgreSQL URL
     * @throws InboxStorageException if the database cannot be reached, or the stock table cannot
     *     be created
     */
    public static Warehouse open(String url, UnaryOperator<InboxBuilder<PostgresInbox>> settings) {
        String jdbcUrl = url.startsWith("jdbc:") ? url : "jdbc:" + url;
        if (!jdbcUrl.startsWith("jdbc:postgresql://")) {
            throw new IllegalArgumentException("not a PostgreSQL URL; expected postgresql://HOST:PORT/DB");
        }
        // A data source without a pool opens a connection per transaction: enough for an example.
        // Production code passes its pooled DataSource (HikariCP, say) to Jdbi.create instead.
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setURL(jdbcUrl);
        Jdbi jdbi = Jdbi.create(dataSource);
        // Built first, so that a refused setting fails before anything is written, and an
        // unreachable database fails as the inbox's typed storage error.
        PostgresInbox inbox = settings.apply(PostgresInbox.builder(jdbi).name(INBOX)).build();
        try {
            jdbi.useTransaction(handle -> {
                // Receivers started together would race on CREATE TABLE IF NOT EXISTS, which can fail
                // on the catalog's unique index; the lock, per schema, lets one of them create it.
                handle.createQuery("SELECT pg_advisory_xact_lock(hashtext('inbox-examples.stock'),"
                                + " hashtext(coalesce(current_schema(), '')))")
                        .mapTo(String.class).one();
                handle.execute("CREATE TABLE IF NOT EXISTS stock"
                        + " (id INTEGER PRIMARY KEY CHECK (id = 1), total BIGINT NOT NULL)");
                handle.execute("INSERT INTO stock (id, total) VALUES (1, 0) ON CONFLICT (id) DO NOTHING");
            });
        } catch (JdbiException e) {
            inbox.close();
            throw new InboxStorageException(InboxStorageException.Kind.OTHER,
                    "the stock table cannot be created: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            inbox.close();
            throw e;
        }
        String where = dataSource.getServerNames()[0] + ":" + dataSource.getPortNumbers()[0] + "/"
                + dataSource.getDatabaseName();
        return new InboxWarehouse(inbox, jdbi, inbox.settings().tables(), "PostgreSQL " + where);
    }
}
