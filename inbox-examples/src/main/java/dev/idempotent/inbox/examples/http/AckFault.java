package dev.idempotent.inbox.examples.http;

import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fault switch for experiments: decides, after a commit, whether the receiver closes the
 * connection instead of writing the response. This is the seed's lost ACK, over real TCP: the
 * business is applied, and the sender cannot know it.
 */
@FunctionalInterface
public interface AckFault {

    /** True to drop the response of the request that just committed. Called once per commit. */
    boolean dropThisAck();

    /** Never drops a response. */
    static AckFault none() {
        return () -> false;
    }

    /**
     * Drops each response with probability {@code rate}, from a generator seeded with {@code seed}
     * so that an experiment can be repeated.
     */
    static AckFault random(double rate, long seed) {
        if (!(rate >= 0 && rate <= 1)) {
            throw new IllegalArgumentException("the drop-ack rate must be from 0 to 1, was " + rate);
        }
        Random random = new Random(seed);
        return () -> {
            synchronized (random) {
                return random.nextDouble() < rate;
            }
        };
    }

    /** Drops the first {@code count} responses and none after. */
    static AckFault first(int count) {
        AtomicInteger left = new AtomicInteger(count);
        return () -> left.getAndDecrement() > 0;
    }
}
