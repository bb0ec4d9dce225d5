package dev.idempotent.inbox.examples.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One TCP connection to a receiver, for requests the JDK's client will not send: a body that
 * stops half-way, broken chunked framing. Every read gives up after the timeout it was opened
 * with, so a test that waits for the server fails instead of hanging.
 */
final class RawClient implements AutoCloseable {

    /** A response as it came over the wire; header names in lower case. */
    record Response(int status, Map<String, String> headers, byte[] body) {
        JsonNode json() throws IOException {
            return ProtocolV1.JSON.readTree(body);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawClient(URI server, Duration readTimeout) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress(server.getHost(), server.getPort()), (int) readTimeout.toMillis());
        socket.setSoTimeout((int) readTimeout.toMillis());
        socket.setTcpNoDelay(true);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    /** Writes {@code text} as ISO-8859-1, the encoding of HTTP's head, and flushes it. */
    RawClient send(String text) throws IOException {
        return send(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    RawClient send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Ends what this client sends; the server reads the end of the stream, and can still answer. */
    void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    /**
     * The next response: its status line, its headers and a body of its {@code Content-Length}.
     * An interim {@code 100 Continue} is a response too, without a body.
     */
    Response readResponse() throws IOException {
        String statusLine = readLine();
        if (statusLine == null) {
            throw new IOException("the connection was closed before a response");
        }
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String line = readLine(); line != null && !line.isEmpty(); line = readLine()) {
            int colon = line.indexOf(':');
            headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
        }
        int length = status == 100 ? 0 : Integer.parseInt(headers.getOrDefault("content-length", "0"));
        return new Response(status, headers, in.readNBytes(length));
    }

    /**
     * True once the server closed the connection: the end of the stream, or a reset. Fails with
     * {@link java.net.SocketTimeoutException} if the connection is still open after the timeout.
     */
    boolean closedByServer() throws IOException {
        try {
            return in.read() == -1;
        } catch (SocketException reset) {
            return true;
        }
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                String text = line.toString(StandardCharsets.ISO_8859_1);
                return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
            }
            line.write(c);
        }
        return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
