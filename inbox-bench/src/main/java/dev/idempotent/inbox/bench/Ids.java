package dev.idempotent.inbox.bench;

/**
 * Message ids as senders make them: 16 hex digits spread over the whole key space, so new ids land
 * between the rows already stored rather than always at the end of the primary key.
 */
final class Ids {

    private Ids() {
    }

    /** The id for sequence number {@code n}: a 64-bit mix of it, so neighbours are far apart. */
    static String random(long n) {
        return hex(mix(n));
    }

    /** The {@code i}-th of {@code count} ids spaced evenly and in ascending order over the key space. */
    static String spread(long i, long count) {
        return hex(Long.divideUnsigned(-1L, count) * i);
    }

    /** Zero-padded so that string order equals unsigned numeric order. */
    private static String hex(long value) {
        String digits = Long.toHexString(value);
        return "0".repeat(16 - digits.length()) + digits;
    }

    /** SplitMix64's finaliser: a bijection, so distinct sequence numbers give distinct ids. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
