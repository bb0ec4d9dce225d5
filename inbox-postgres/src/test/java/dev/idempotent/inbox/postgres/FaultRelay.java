package dev.idempotent.inbox.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP relay on loopback between the driver and the real PostgreSQL server that breaks
 * connections on request, the way a network or a server restart breaks them for the client:
 *
 * <ul>
 *   <li>{@link #cutCommit(Cut, int)}: a coming relayed {@code COMMIT} is either dropped with its
 *       connection before it reaches the server ({@link Cut#BEFORE_THE_SERVER}: nothing commits),
 *       or carried out with its answer dropped ({@link Cut#AFTER_THE_SERVER}: it commits, and the
 *       client never hears so);
 *   <li>{@link #goDown()}: every relayed connection is cut at once and every new one is closed as
 *       soon as it is accepted, until {@link #comeUp()}. For the client that is a server restart;
 *       the real server, which other tests on the machine share, is never touched.
 * </ul>
 *
 * <p>It reads the plain protocol (the fixture turns TLS off) and recognises the driver's COMMIT by
 * its query text, {@code COMMIT} ended by the protocol's NUL byte.
 *
 * <p>Public, and in this module's test jar, for the Kafka consumer's tests of a database outage.
 */
public final class FaultRelay implements AutoCloseable {

    /** Where a cut COMMIT is lost. */
    public enum Cut {
        /** The COMMIT never reaches the server, which rolls back when the connection ends. */
        BEFORE_THE_SERVER,
        /** The server commits; its answer is dropped and the connection cut. */
        AFTER_THE_SERVER
    }

    private static final byte[] COMMIT = "COMMIT\0".getBytes(StandardCharsets.US_ASCII);

    private final String host;
    private final int port;
    private final ServerSocket listener;
    private final AtomicReference<Cut> armed = new AtomicReference<>();
    private final AtomicInteger commitsToPass = new AtomicInteger();
    private final AtomicInteger commitsCut = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean down;

    public FaultRelay(String host, int port) throws IOException {
        this.host = host;
        this.port = port;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon("fault-relay-accept", this::accept);
    }

    /** The port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** Lets {@code passing} COMMITs through, then makes the next one get lost as {@code cut} says. */
    public void cutCommit(Cut cut, int passing) {
        commitsToPass.set(passing);
        armed.set(cut);
    }

    /** How many COMMITs were cut so far. */
    public int commitsCut() {
        return commitsCut.get();
    }

    /** How many connections were closed on arrival while down. */
    public int refused() {
        return refused.get();
    }

    /** Cuts every connection and closes new ones on arrival: the server went away. */
    public void goDown() {
        down = true;
        sockets.forEach(FaultRelay::closeQuietly);
        sockets.clear();
    }

    /** Relays new connections again: the server is back. */
    public void comeUp() {
        down = false;
    }

    private void accept() {
        while (!listener.isClosed()) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // the listener was closed
            }
            if (down) {
                refused.incrementAndGet();
                closeQuietly(client);
                continue;
            }
            try {
                Socket server = new Socket(host, port);
                sockets.add(client);
                sockets.add(server);
                Pair pair = new Pair(client, server);
                daemon("fault-relay-to-server", () -> toServer(pair));
                daemon("fault-relay-to-client", () -> toClient(pair));
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    /** One relayed connection, and whether its COMMIT's answer is to be dropped. */
    private static final class Pair {
        final Socket client;
        final Socket server;
        volatile boolean dropAnswer;

        Pair(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        void close() {
            closeQuietly(client);
            closeQuietly(server);
        }
    }

    private void toServer(Pair pair) {
        byte[] buffer = new byte[8192];
        byte[] window = new byte[0];
        try (InputStream in = pair.client.getInputStream(); OutputStream out = pair.server.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                // The text may straddle two reads: search the end of the last read with this one.
                byte[] joined = join(window, buffer, n);
                if (contains(joined, COMMIT) && armed.get() != null && commitsToPass.getAndDecrement() <= 0) {
                    Cut cut = armed.getAndSet(null);
                    if (cut == Cut.BEFORE_THE_SERVER) {
                        commitsCut.incrementAndGet();
                        return; // not forwarded; the finally block cuts both sides
                    }
                    if (cut == Cut.AFTER_THE_SERVER) {
                        // Set before forwarding, so the answer cannot overtake the flag.
                        pair.dropAnswer = true;
                    }
                }
                out.write(buffer, 0, n);
                out.flush();
                window = tail(joined, COMMIT.length - 1);
            }
        } catch (IOException e) {
            // One side closed; the other pump ends too.
        } finally {
            pair.close();
        }
    }

    private void toClient(Pair pair) {
        byte[] buffer = new byte[8192];
        try (InputStream in = pair.server.getInputStream(); OutputStream out = pair.client.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                if (pair.dropAnswer) {
                    // The server answered the COMMIT, so it has committed: lose the answer.
                    commitsCut.incrementAndGet();
                    return;
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // One side closed; the other pump ends too.
        } finally {
            pair.close();
        }
    }

    private static byte[] join(byte[] head, byte[] buffer, int n) {
        byte[] joined = new byte[head.length + n];
        System.arraycopy(head, 0, joined, 0, head.length);
        System.arraycopy(buffer, 0, joined, head.length, n);
        return joined;
    }

    private static byte[] tail(byte[] bytes, int length) {
        int from = Math.max(0, bytes.length - length);
        byte[] tail = new byte[bytes.length - from];
        System.arraycopy(bytes, from, tail, 0, tail.length);
        return tail;
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static void daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // Tearing down a relay: nothing to report.
        }
    }

    @Override
    public void close() {
        closeQuietly(listener);
        sockets.forEach(FaultRelay::closeQuietly);
    }
}
