package dev.idempotent.inbox.examples.http;

import java.net.InetAddress;
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
 * @param threads how many requests are handled at once
 */
public record ReceiverSettings(InetAddress address, int port, Optional<String> token, AckFault ackFault, int threads) {

    /** Requests handled at once unless told otherwise. */
    public static final int DEFAULT_THREADS = 8;

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
    }

    /** 127.0.0.1, an ephemeral port, no token, no dropped ACKs, {@link #DEFAULT_THREADS} threads. */
    public static ReceiverSettings loopback() {
        return new ReceiverSettings(InetAddress.getLoopbackAddress(), 0, Optional.empty(), AckFault.none(),
                DEFAULT_THREADS);
    }

    public ReceiverSettings withAddress(InetAddress address) {
        return new ReceiverSettings(address, port, token, ackFault, threads);
    }

    public ReceiverSettings withPort(int port) {
        return new ReceiverSettings(address, port, token, ackFault, threads);
    }

    public ReceiverSettings withToken(String token) {
        return new ReceiverSettings(address, port, Optional.of(token), ackFault, threads);
    }

    public ReceiverSettings withAckFault(AckFault ackFault) {
        return new ReceiverSettings(address, port, token, ackFault, threads);
    }

    public ReceiverSettings withThreads(int threads) {
        return new ReceiverSettings(address, port, token, ackFault, threads);
    }
}
