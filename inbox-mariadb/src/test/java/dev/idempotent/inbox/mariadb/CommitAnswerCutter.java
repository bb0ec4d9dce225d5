package dev.idempotent.inbox.mariadb;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TCP relay on loopback between the driver and a node that, once armed, passes on the answer to
 * the next COMMIT and a given number of requests after it, and cuts the connection when the client
 * sends the one after those, which it drops: the client learns that its transaction committed,
 * and a later statement finds the connection gone, as when a node dies right after a commit.
 *
 * <p>It reads the plain protocol (the driver's default: no TLS, no compression) and recognises the
 * driver's COMMIT by its packet: a 7-byte payload, sequence number 0, command COM_QUERY (3) and the
 * text {@code COMMIT}. The server's answer, an OK packet of a few bytes, arrives in one read on
 * loopback.
 */
public final class CommitAnswerCutter implements AutoCloseable {

    private static final byte[] COMMIT = commitPacket();

    private final String host;
    private final int port;
    private final ServerSocket listener;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final int passed;
    private final CountDownLatch cut = new CountDownLatch(1);
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    private static byte[] commitPacket() {
        byte[] text = "COMMIT".getBytes(StandardCharsets.US_ASCII);
        byte[] packet = new byte[5 + text.length];
        packet[0] = (byte) (1 + text.length); // payload length, 3 bytes little-endian; then sequence 0
        packet[4] = 3; // COM_QUERY
        System.arraycopy(text, 0, packet, 5, text.length);
        return packet;
    }

    /** A relay to {@code host:port} that lets {@code passed} requests through after the COMMIT's answer. */
    public CommitAnswerCutter(String host, int port, int passed) throws IOException {
        this.passed = passed;
        this.host = host;
        this.port = port;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon("relay-accept", this::accept);
    }

    /** The port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** Makes the connection that relays the next COMMIT end right after the COMMIT's answer. */
    public void arm() {
        armed.set(true);
    }

    /** Whether a connection was cut after a COMMIT's answer; waits a little for the relay threads. */
    public boolean hasCut() throws InterruptedException {
        return cut.await(10, TimeUnit.SECONDS);
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(host, port);
                sockets.add(client);
                sockets.add(server);
                AtomicBoolean commitSent = new AtomicBoolean();
                AtomicBoolean answered = new AtomicBoolean();
                daemon("relay-to-server", () -> toServer(client, server, commitSent, answered));
                daemon("relay-to-client", () -> toClient(server, client, commitSent, answered));
            } catch (IOException e) {
                return; // the listener was closed
            }
        }
    }

    private void toServer(Socket client, Socket server, AtomicBoolean commitSent, AtomicBoolean answered) {
        byte[] buffer = new byte[8192];
        byte[] window = new byte[0];
        try (InputStream in = client.getInputStream(); OutputStream out = server.getOutputStream()) {
            int after = 0;
            for (int n; (n = in.read(buffer)) > 0; ) {
                if (answered.get() && after++ == passed) {
                    // The client has the COMMIT's answer and asked for more: the connection goes.
                    cut.countDown();
                    return;
                }
                // The text may straddle two reads: search the end of the last read with this one.
                byte[] joined = join(window, buffer, n);
                if (contains(joined, COMMIT) && armed.compareAndSet(true, false)) {
                    // Set before forwarding, so the answer cannot overtake the flag.
                    commitSent.set(true);
                }
                out.write(buffer, 0, n);
                out.flush();
                window = tail(joined, COMMIT.length - 1);
            }
        } catch (IOException e) {
            // One side closed; the other pump ends too.
        } finally {
            closeQuietly(client);
            closeQuietly(server);
        }
    }

    private void toClient(Socket server, Socket client, AtomicBoolean commitSent, AtomicBoolean answered) {
        byte[] buffer = new byte[8192];
        try (InputStream in = server.getInputStream(); OutputStream out = client.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                // Set before forwarding, so the client's next request cannot overtake the flag.
                answered.compareAndSet(false, commitSent.get());
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // One side closed; the other pump ends too.
        } finally {
            closeQuietly(client);
            closeQuietly(server);
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
        sockets.forEach(CommitAnswerCutter::closeQuietly);
    }
}
