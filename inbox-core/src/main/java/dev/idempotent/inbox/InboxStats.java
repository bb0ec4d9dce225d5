package dev.idempotent.inbox;

/**
 * A snapshot of one inbox instance's counters since it was built. Requests and applied effects are
 * counted apart, so "two requests, one business" is visible: {@code attempts() == 2} and
 * {@code applied() == 1} is deduplication working as intended.
 *
 * @param applied calls that ran the effect and committed
 * @param duplicates calls that found the id with the same content
 * @param conflicts calls that found the id with different content
 * @param invalid calls refused for a bad id or content
 * @param stale calls refused because their origin time is older than what the inbox still remembers
 * @param busy calls that did not obtain the write lock in time
 * @param failed calls that ended with any other exception: the effect's, or the database's
 */
public record InboxStats(long applied, long duplicates, long conflicts, long invalid, long stale, long busy, long failed) {

    /** {@return the number of calls to {@code apply}}: always the sum of the other counters. */
    public long attempts() {
        return applied + duplicates + conflicts + invalid + stale + busy + failed;
    }

    /** {@return the number of calls that may be acknowledged}: applied plus duplicates. */
    public long accepted() {
        return applied + duplicates;
    }
}
