package dev.idempotent.inbox.rabbitmq;

import com.rabbitmq.client.Delivery;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Counts how often each id's effect has failed, to give up after the configured number of
 * attempts. A quorum queue counts redeliveries itself, in the {@code x-delivery-count} header,
 * and that count survives a consumer restart; a classic queue has no such count, so this consumer
 * keeps one in memory (for the most recent ids only), which starts again at a restart.
 *
 * <p>The broker's count counts every return, whatever its reason: a requeue because the database
 * was busy or down is counted as much as one because the effect failed. So the returns this
 * consumer made for a reason other than the effect's failure are remembered too, and taken off the
 * broker's count: a database outage longer than the attempt limit does not dead-letter messages
 * whose effect never failed. Returns made by another consumer process, by this one before a
 * restart, or by a lost channel are not known here and still count.
 *
 * <p>Used by the consumer's one worker thread only.
 */
final class EffectAttempts {

    static final String DELIVERY_COUNT = "x-delivery-count";

    /** Enough to cover every id of many batches in flight; older entries are forgotten. */
    private static final int REMEMBERED = 10_000;

    private final int maxAttempts;
    /** Per id: the effect's failures, and the returns for other reasons. */
    private final Map<String, int[]> counts = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, int[]> eldest) {
            return size() > REMEMBERED;
        }
    };

    EffectAttempts(int maxAttempts) {
        this.maxAttempts = maxAttempts;
    }

    /**
     * Records a failed attempt of {@code id}'s effect for {@code delivery}.
     *
     * @return true when attempts are left, false when this was the last one
     */
    boolean failedAndMayRetry(String id, Delivery delivery) {
        int[] count = counts.computeIfAbsent(id, k -> new int[2]);
        int counted = ++count[0];
        // The broker's count is of earlier deliveries that were returned; this one is one more.
        long attempt = Math.max(counted, brokerDeliveryCount(delivery) - count[1] + 1);
        if (attempt >= maxAttempts) {
            counts.remove(id);
            return false;
        }
        return true;
    }

    /** Records that {@code id}'s delivery is returned for a reason other than its effect's failure. */
    void returnedNotCounted(String id) {
        counts.computeIfAbsent(id, k -> new int[2])[1]++;
    }

    /** Forgets {@code id}, whose delivery was settled for good. */
    void settled(String id) {
        counts.remove(id);
    }

    /** {@return the quorum queue's count of earlier deliveries of this message; 0 without one} */
    static long brokerDeliveryCount(Delivery delivery) {
        Map<String, Object> headers = delivery.getProperties().getHeaders();
        Object count = headers == null ? null : headers.get(DELIVERY_COUNT);
        return count instanceof Number number ? number.longValue() : 0;
    }
}
