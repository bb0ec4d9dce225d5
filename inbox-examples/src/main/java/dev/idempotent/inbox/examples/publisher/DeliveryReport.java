package dev.idempotent.inbox.examples.publisher;

/**
 * What one delivery run did.
 *
 * @param items pending items the run started with
 * @param acked items that got a verified ACK
 * @param duplicatesConfirmed of those, items the receiver had applied before (an earlier ACK was lost)
 * @param rejected items refused definitely, parked
 * @param exhausted items whose attempts ran out, parked
 * @param attempts requests sent
 * @param resends requests beyond the first one per item in this run
 * @param pending items still pending when the run ended (a failure writing to the outbox)
 */
public record DeliveryReport(
        int items, int acked, int duplicatesConfirmed, int rejected, int exhausted, int attempts, int resends,
        int pending) {

    /** True when every item was acked or rejected: nothing is left for a later run or an operator. */
    public boolean settled() {
        return pending == 0 && exhausted == 0;
    }
}
