package dev.idempotent.inbox.mariadb.galera;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.mariadb.jdbc.MariaDbPoolDataSource;

/**
 * A database of its own on the cluster, created on node 1 with a random name and dropped with
 * everything in it on close, in the manner of the adapter's other tests' fixture. Beside the
 * inbox's tables it holds {@code applied}, one row per id an effect ran for, counting the runs.
 */
final class GaleraDatabase implements AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final String name;
    private final List<MariaDbPoolDataSource> pools = new ArrayList<>();

    GaleraDatabase() {
        byte[] suffix = new byte[6];
        RANDOM.nextBytes(suffix);
        this.name = "inbox_galera_" + HexFormat.of().formatHex(suffix);
        Jdbi.create(url(1, "", ""), GaleraCluster.USER, GaleraCluster.PASSWORD).useHandle(handle -> {
            handle.execute("CREATE DATABASE " + name + " CHARACTER SET utf8mb4");
            handle.execute("CREATE TABLE " + name + ".applied (id VARCHAR(64) PRIMARY KEY, qty BIGINT NOT NULL,"
                    + " runs INT NOT NULL) ENGINE=InnoDB");
        });
    }

    private static String url(int node, String database, String options) {
        return "jdbc:mariadb://" + GaleraCluster.HOST + ":" + GaleraCluster.port(node) + "/" + database
                + "?connectTimeout=10000" + options;
    }

    /** The database's name. */
    String name() {
        return name;
    }

    /** The database's URL on {@code node}, counting affected rows, ending with {@code options}. */
    String url(int node, String options) {
        return url(node, name, "&useAffectedRows=true" + options);
    }

    /** A Jdbi over a new connection per handle to {@code node}. */
    Jdbi jdbi(int node, String options) {
        return Jdbi.create(url(node, options), GaleraCluster.USER, GaleraCluster.PASSWORD);
    }

    /** A Jdbi over a pool of {@code size} connections to {@code node}, closed with the database. */
    Jdbi pooled(int node, int size, String options) {
        try {
            MariaDbPoolDataSource pool = new MariaDbPoolDataSource(url(node, "&maxPoolSize=" + size
                    + "&user=" + GaleraCluster.USER + "&password=" + GaleraCluster.PASSWORD + options));
            synchronized (pools) {
                pools.add(pool);
            }
            return Jdbi.create(pool);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The effect of the tests: records that it ran for {@code id}, adding up runs of the same id. */
    static int recordRun(Handle tx, String id, long qty) {
        return tx.execute("INSERT INTO applied (id, qty, runs) VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE runs = runs + 1",
                id, qty);
    }

    /**
     * What {@code node} holds once it has caught up with the cluster: the ids the effect ran for,
     * their qty total, the ids it ran for more than once, and the inbox's rows of {@code inbox}.
     */
    Map<String, Long> tally(int node, String inbox) {
        return jdbi(node, "&sessionVariables=wsrep_sync_wait=1").withHandle(handle -> {
            Map<String, Object> effects = handle.createQuery("SELECT COUNT(*) AS ids, COALESCE(SUM(qty), 0) AS total,"
                    + " COALESCE(SUM(runs > 1), 0) AS repeated FROM applied").mapToMap().one();
            long rows = handle.createQuery("SELECT COUNT(*) FROM inbox_message WHERE inbox = ?").bind(0, inbox)
                    .mapTo(Long.class).one();
            return Map.of("ids", ((Number) effects.get("ids")).longValue(),
                    "total", ((Number) effects.get("total")).longValue(),
                    "repeated", ((Number) effects.get("repeated")).longValue(),
                    "inboxRows", rows);
        });
    }

    @Override
    public void close() {
        synchronized (pools) {
            pools.forEach(MariaDbPoolDataSource::close);
        }
        RuntimeException failure = null;
        for (int node = 1; node <= GaleraCluster.NODES; node++) { // any node that answers will do
            try {
                Jdbi.create(url(node, "", ""), GaleraCluster.USER, GaleraCluster.PASSWORD)
                        .useHandle(handle -> handle.execute("DROP DATABASE IF EXISTS " + name));
                return;
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        throw failure;
    }
}
