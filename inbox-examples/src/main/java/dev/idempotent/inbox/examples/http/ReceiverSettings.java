package dev.idempotent.inbox.examples.http;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How the receiver listens. Immutable; {@link #loopback()} gives the defaults and each
 * {@code with} method a validated copy.
 *
 * @param address the address to bind; anything but loopback requires a token
 * @param port the port, 0 for an ephemeral one
 * @param token the shared bearer token every request must carry, if any
 * @param ackFault drops responses after the commit, for experiments
 * @param threads how many requests are handled at once: how many may work in the warehouse
 *     together, each in a transaction of its own
 * @param connections how many requests may be read and answered at once, each on a thread of its
 *     own; at least {@code threads}. A client that sends slowly holds one of them, for at most
 *     {@code readTimeout}, and never one of the warehouse's {@code threads}.
 * @param readTimeout how long a request may take to arrive whole, head and body, counted from its
 *     first byte; a request still incomplete then loses its connection, without an answer
 */
public record ReceiverSettings(
        InetAddress address, int port, Optional<String> token, AckFault ackFault, int threads, int connections,
        Duration readTimeout) {

    /** Requests handled at once unless told otherwise. */
    public static final int DEFAULT_THREADS = 8;
    /** The read timeout unless told otherwise: ample for 64 KiB, short for a client that stalls. */
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(10);

    public ReceiverSettings {
        Objects.requireNonNull(address, "address");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be from 0 to 65535, was " + port);
        }
        Objects.requireNonNull(token, "token");
        if (token.isPresent() && token.get().isBlank()) {
            throw new IllegalArgumentException("token must not be blank");
        }
        if (!address.isLoopbackAddress() && token.isEmpty()) {
            throw new IllegalArgumentException("refusing to listen on " + address.getHostAddress()
                    + " without a token: anyone who can reach it could change the stock. Give --token,"
                    + " or bind to 127.0.0.1.");
        }
        Objects.requireNonNull(ackFault, "ackFault");
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, was " + threads);
        }
        if (connections < threads) {
            throw new IllegalArgumentException("connections must be at least threads (" + threads + "), was " + connections);
        }
        Objects.requireNonNull(readTimeout, "readTimeout");
        if (readTimeout.isNegative() || readTimeout.isZero()) {
            throw new IllegalArgumentException("readTimeout must be positive, was " + readTimeout);
        }
    }

    /**
     * Settings with {@link #defaultConnections(int)} connections and the
     * {@linkplain #DEFAULT_READ_TIMEOUT default read timeout}.
     */
    public ReceiverSettings(InetAddress address, int port, Optional<String> token, AckFault ackFault, int threads) {
        this(address, port, token, ackFault, threads, defaultConnections(threads), DEFAULT_READ_TIMEOUT);
    }

    /** Four connections per thread, and at least 32. */
    public static int defaultConnections(int threads) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(32, 4L * threads));
    }

    /**
     * 127.0.0.1, an ephemeral port, no token, no dropped ACKs, {@link #DEFAULT_THREADS} threads,
     * their default connections and the default read timeout.
     */
    public static ReceiverSettings loopback() {
        return new ReceiverSettings(InetAddress.getLoopbackAddress(), 0, Optional.empty(), AckFault.none(),
                DEFAULT_THREADS);
    }

    public ReceiverSettings withAddress(InetAddress address) {
        return new ReceiverSettings(address, port, token, ackFault, threads, connections, readTimeout);
    }

    public ReceiverSettings withPort(int port) {
        return new ReceiverSettings(address, port, token, ackFault, threads, connections, readTimeout);
    }

    public ReceiverSettings withToken(String token) {
        return new ReceiverSettings(address, port, Optional.of(token), ackFault, threads, connections, readTimeout);
    }

    public ReceiverSettings withAckFault(AckFault ackFault) {
        return new ReceiverSettings(address, port, token, ackFault, threads, connections, readTimeout);
    }

    /** These settings with {@code threads}, and connections raised to their default for it if fewer. */
    public ReceiverSettings withThreads(int threads) {
        int atLeast = threads < 1 ? connections : Math.max(connections, defaultConnections(threads));
        return new ReceiverSettings(address, port, token, ackFault, threads, atLeast, readTimeout);
    }

    public ReceiverSettings withConnections(int connections) {
        return new ReceiverSettings(address, port, token, ackFault, threads, connections, readTimeout);
    }

    public ReceiverSettings withReadTimeout(Duration readTimeout) {
        return new ReceiverSettings(address, port, token, ackFault, threads, connections, readTimeout);
    }
}
