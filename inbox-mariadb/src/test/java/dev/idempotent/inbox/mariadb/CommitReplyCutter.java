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
 * A TCP relay on loopback between the driver and the real MariaDB server that, once armed, loses
 * the answer to the next COMMIT it relays: the COMMIT reaches the server and is carried out, and
 * when the server's answer arrives the relay drops it and cuts the client's connection. That is
 * the lost acknowledgement of the seed, one layer down, with nothing simulated but the cut.
 *
 * <p>It reads the plain protocol (the driver's default: no TLS, no compression) and recognises the
 * driver's COMMIT by its packet: a 7-byte payload, sequence number 0, command COM_QUERY (3) and the
 * text {@code COMMIT}.
 */
final class CommitReplyCutter implements AutoCloseable {

    private static final byte[] COMMIT = commitPacket();

    private final String host;
    private final int port;
    private final ServerSocket listener;
    private final AtomicBoolean armed = new AtomicBoolean();
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

    CommitReplyCutter(String host, int port) throws IOException {
        this.host = host;
        this.port = port;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon("relay-accept", this::accept);
    }

    /** The port clients connect to. */
    int port() {
        return listener.getLocalPort();
    }

    /** Makes the next relayed COMMIT lose its answer. */
    void arm() {
        armed.set(true);
    }

    /** Whether an answer to a COMMIT was dropped; waits a little for the relay threads to finish. */
    boolean hasCut() throws InterruptedException {
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
                daemon("relay-to-server", () -> toServer(client, server, commitSent));
                daemon("relay-to-client", () -> toClient(server, client, commitSent));
            } catch (IOException e) {
                return; // the listener was closed
            }
        }
    }

    private void toServer(Socket client, Socket server, AtomicBoolean commitSent) {
        byte[] buffer = new byte[8192];
        byte[] window = new byte[0];
        try (InputStream in = client.getInputStream(); OutputStream out = server.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
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

    private void toClient(Socket server, Socket client, AtomicBoolean commitSent) {
        byte[] buffer = new byte[8192];
        try (InputStream in = server.getInputStream(); OutputStream out = client.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                if (commitSent.get()) {
                    // The server answered the COMMIT, so it has committed: lose the answer.
                    cut.countDown();
                    return;
                }
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
        sockets.forEach(CommitReplyCutter::closeQuietly);
    }
}
