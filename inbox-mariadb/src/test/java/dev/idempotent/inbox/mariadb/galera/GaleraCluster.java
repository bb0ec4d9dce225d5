package dev.idempotent.inbox.mariadb.galera;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The three-node cluster of {@code scripts/galera}: node N takes clients on 127.0.0.1:13305+N as
 * root without a password. The script starts, kills and restarts nodes; this class runs it and
 * asks the nodes how they are.
 */
final class GaleraCluster implements AutoCloseable {

    static final int NODES = 3;
    static final String HOST = "127.0.0.1";
    static final String USER = "root";
    static final String PASSWORD = "";

    private static final long SCRIPT_TIMEOUT_SECONDS = 300;

    private final Path script;
    private final boolean startedHere;

    private GaleraCluster(Path script, boolean startedHere) {
        this.script = script;
        this.startedHere = startedHere;
    }

    /** The client port of {@code node}, 1 to 3. */
    static int port(int node) {
        if (node < 1 || node > NODES) {
            throw new IllegalArgumentException("node must be 1 to " + NODES + ": " + node);
        }
        return 13305 + node;
    }

    /** The cluster, started through the script if not all three nodes are ready. */
    static GaleraCluster ensureStarted() {
        Path script = script();
        boolean anyAnswered = false;
        boolean allReady = true;
        for (int node = 1; node <= NODES; node++) {
            Map<String, String> status = status(node);
            anyAnswered |= !status.isEmpty();
            allReady &= ready(status);
        }
        if (!allReady) {
            run(script, "start");
        }
        // Nodes that were up before are someone else's to stop.
        return new GaleraCluster(script, !anyAnswered);
    }

    /** kill -9 of {@code node}'s server; returns once the process is gone. */
    void kill(int node) {
        run(script, "kill", Integer.toString(node));
    }

    /** Starts {@code node} again and returns once it has rejoined the others and is Synced. */
    void restart(int node) {
        run(script, "restart", Integer.toString(node));
    }

    /** Stops the cluster if it was started for this run. */
    @Override
    public void close() {
        if (startedHere) {
            run(script, "stop");
        }
    }

    /** {@code node}'s wsrep status variables, lower case, or an empty map if it does not answer. */
    static Map<String, String> status(int node) {
        Map<String, String> status = new HashMap<>();
        try (Connection connection = DriverManager.getConnection(
                "jdbc:mariadb://" + HOST + ":" + port(node) + "/?connectTimeout=2000", USER, PASSWORD);
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT LOWER(variable_name), variable_value"
                        + " FROM information_schema.global_status WHERE variable_name LIKE 'wsrep%'")) {
            while (rows.next()) {
                status.put(rows.getString(1), rows.getString(2));
            }
        } catch (SQLException e) {
            return Map.of();
        }
        return status;
    }

    private static boolean ready(Map<String, String> status) {
        return "ON".equals(status.get("wsrep_ready"))
                && Integer.toString(NODES).equals(status.get("wsrep_cluster_size"))
                && "Synced".equals(status.get("wsrep_local_state_comment"));
    }

    private static Path script() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("scripts").resolve("galera");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("scripts/galera not found above " + Path.of("").toAbsolutePath());
    }

    private static void run(Path script, String... arguments) {
        String[] command = new String[arguments.length + 1];
        command[0] = script.toString();
        System.arraycopy(arguments, 0, command, 1, arguments.length);
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getOutputStream().close();
            byte[] output = process.getInputStream().readAllBytes(); // until the script exits
            if (!process.waitFor(SCRIPT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish");
            }
            String text = new String(output, StandardCharsets.UTF_8).strip();
            if (process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed (exit " + process.exitValue()
                        + "): " + text);
            }
            System.out.println(text);
        } catch (IOException e) {
            throw new IllegalStateException("could not run " + script, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + script, e);
        }
    }

    /**
     * Makes the cluster available to a test class: started once for the whole run, and closed (so
     * stopped if started here) when the run ends.
     */
    static final class Extension implements BeforeAllCallback, ParameterResolver {

        private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(GaleraCluster.class);

        @Override
        public void beforeAll(ExtensionContext context) {
            cluster(context);
        }

        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == GaleraCluster.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            return cluster(context);
        }

        private static GaleraCluster cluster(ExtensionContext context) {
            return context.getRoot().getStore(NAMESPACE)
                    .getOrComputeIfAbsent("cluster", key -> ensureStarted(), GaleraCluster.class);
        }
    }
}
