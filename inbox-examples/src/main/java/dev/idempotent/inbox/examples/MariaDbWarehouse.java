package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;

/**
 * Opens the warehouse in a MariaDB database that several receiver processes share, with the same
 * tables as on PostgreSQL: {@code stock} with its single row, and the inbox's {@code inbox_message}
 * beside it in the database the URL names, so that the two change in one transaction.
 */
public final class MariaDbWarehouse {

    /** The inbox name the warehouse receives shipments under, the same as on SQLite. */
    public static final String INBOX = InboxWarehouse.INBOX;

    private MariaDbWarehouse() {}

    /**
     * Opens the warehouse in the database {@code url} names, creating its tables if absent.
     *
     * @param url {@code mariadb://USER[:PASSWORD]@HOST:PORT/DB} or the same with {@code jdbc:} in
     *     front; parameters of the MariaDB JDBC driver may follow after {@code ?}, except that
     *     {@code useAffectedRows} is always {@code true}, as the inbox needs
     * @param settings adjusts the inbox's settings (retention, listener, ...)
     * @throws IllegalArgumentException if {@code url} is not a MariaDB URL with a host and a database
     * @throws InboxStorageException if the database cannot be reached, or the stock table cannot
     *     be created
     */
    public static Warehouse open(String url, UnaryOperator<InboxBuilder<MariaDbInbox>> settings) {
        Address address = Address.parse(url);
        Jdbi jdbi = Jdbi.create(address.jdbcUrl(), address.credentials());
        // Built first, so that a refused setting fails before anything is written, and an
        // unreachable database fails as the inbox's typed storage error.
        MariaDbInbox inbox = settings.apply(MariaDbInbox.builder(jdbi).name(INBOX)).build();
        try {
            jdbi.useHandle(handle -> {
                // DDL commits on its own in MariaDB, so a session lock, not a transaction, keeps
                // receivers started together from racing on the table and its row.
                String lock = "inbox-examples.stock." + address.database();
                handle.createQuery("SELECT GET_LOCK(?, 30)").bind(0, lock).mapTo(Integer.class).one();
                try {
                    handle.execute("CREATE TABLE IF NOT EXISTS stock"
                            + " (id INTEGER PRIMARY KEY CHECK (id = 1), total BIGINT NOT NULL) ENGINE=InnoDB");
                    handle.execute("INSERT INTO stock (id, total) VALUES (1, 0) ON DUPLICATE KEY UPDATE id = id");
                } finally {
                    handle.createQuery("SELECT RELEASE_LOCK(?)").bind(0, lock).mapTo(Integer.class).one();
                }
            });
        } catch (JdbiException e) {
            inbox.close();
            throw new InboxStorageException(InboxStorageException.Kind.OTHER,
                    "the stock table cannot be created: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            inbox.close();
            throw e;
        }
        return new InboxWarehouse(inbox, jdbi, inbox.settings().tables(), "MariaDB " + address.where());
    }

    /** A {@code mariadb://} URL taken apart: the credentials go to the driver apart from the URL. */
    private record Address(String host, int port, String database, String user, String password, List<String> parameters) {

        private static final int DEFAULT_PORT = 3306;

        static Address parse(String url) {
            String bare = url.regionMatches(true, 0, "jdbc:", 0, 5) ? url.substring(5) : url;
            if (!bare.regionMatches(true, 0, "mariadb://", 0, 10)) {
                throw new IllegalArgumentException("not a MariaDB URL; expected mariadb://USER@HOST:PORT/DB");
            }
            URI uri;
            try {
                uri = new URI(bare);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("not a MariaDB URL (" + e.getReason() + ");"
                        + " expected mariadb://USER@HOST:PORT/DB");
            }
            String path = uri.getPath() == null ? "" : uri.getPath();
            String database = path.startsWith("/") ? path.substring(1) : path;
            if (uri.getHost() == null || database.isEmpty() || database.contains("/")) {
                throw new IllegalArgumentException("a MariaDB URL needs a host and a database:"
                        + " mariadb://USER@HOST:PORT/DB");
            }
            String user = null;
            String password = null;
            String info = uri.getUserInfo();
            if (info != null) {
                int colon = info.indexOf(':');
                user = colon < 0 ? info : info.substring(0, colon);
                password = colon < 0 ? null : info.substring(colon + 1);
            }
            List<String> parameters = new ArrayList<>();
            if (uri.getRawQuery() != null) {
                for (String parameter : uri.getRawQuery().split("&")) {
                    String key = parameter.split("=", 2)[0].toLowerCase(Locale.ROOT);
                    // Counting found rows would make the claim of a stored id look like a new one.
                    if (!parameter.isEmpty() && !key.equals("useaffectedrows")) {
                        parameters.add(parameter);
                    }
                }
            }
            parameters.add("useAffectedRows=true");
            return new Address(uri.getHost(), uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort(), database, user, password,
                    List.copyOf(parameters));
        }

        /** The user and password of the URL, if it has them; else the driver's defaults or the URL's parameters hold. */
        Properties credentials() {
            Properties credentials = new Properties();
            if (user != null) {
                credentials.setProperty("user", user);
            }
            if (password != null) {
                credentials.setProperty("password", password);
            }
            return credentials;
        }

        String jdbcUrl() {
            return "jdbc:mariadb://" + host + ":" + port + "/" + database + "?" + String.join("&", parameters);
        }

        /** Host, port and database, without credentials or parameters. */
        String where() {
            return host + ":" + port + "/" + database;
        }
    }
}
