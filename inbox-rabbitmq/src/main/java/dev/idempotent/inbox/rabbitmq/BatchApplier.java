package dev.idempotent.inbox.rabbitmq;

import com.rabbitmq.client.Delivery;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a batch of deliveries through the inbox and decides, per delivery, what the broker is
 * told. It never touches the channel: the verdicts are settled by {@link DeliveryWorker} after
 * this returns, that is, after the commit. Logs name ids and delivery tags, never bodies.
 *
 * <p>Used by the consumer's one worker thread only.
 */
final class BatchApplier<H, T> {

    private static final Logger log = LoggerFactory.getLogger(RabbitInboxConsumer.class);

    private final Inbox<H> inbox;
    private final MessageIdSource ids;
    private final ContentDecoder<T> decoder;
    private final DeliveryEffect<H, T> effect;
    private final EffectAttempts attempts;
    final LongAdder applied = new LongAdder();
    final LongAdder duplicates = new LongAdder();
    private Error fatal;

    BatchApplier(Inbox<H> inbox, MessageIdSource ids, ContentDecoder<T> decoder, DeliveryEffect<H, T> effect,
            int maxEffectAttempts) {
        this.inbox = inbox;
        this.ids = ids;
        this.decoder = decoder;
        this.effect = effect;
        this.attempts = new EffectAttempts(maxEffectAttempts);
    }

    /**
     * One verdict per delivery, in order; returns only after the batch's transaction has ended.
     * {@code stopping} answers whether the consumer is asked to stop, for a failed batch applied
     * one message at a time, which then returns its untried messages rather than apply them.
     */
    List<Verdict> apply(List<Delivery> deliveries, BooleanSupplier stopping) {
        Verdict[] verdicts = new Verdict[deliveries.size()];
        List<Integer> positions = new ArrayList<>(deliveries.size());
        List<Message> messages = new ArrayList<>(deliveries.size());
        Map<Message, T> values = new IdentityHashMap<>();
        for (int i = 0; i < deliveries.size(); i++) {
            Delivery delivery = deliveries.get(i);
            String id;
            try {
                id = idOf(delivery);
            } catch (Error e) {
                if (fatal != null) {
                    verdicts[i] = Verdict.REQUEUE;
                    continue;
                }
                // The application's id source will throw it again on every redelivery: returned to
                // the queue, the delivery would stop each consumer it reaches, as an effect's would.
                fatal = e;
                log.error("reading the message id of delivery {} threw {}; rejected without requeue, and the consumer"
                        + " stops", tag(delivery), e.getClass().getName(), e);
                verdicts[i] = Verdict.DEAD_LETTER;
                continue;
            }
            if (id == null) {
                log.info("delivery {} carries no message id; rejected without requeue", tag(delivery));
                verdicts[i] = Verdict.DEAD_LETTER;
                continue;
            }
            if (fatal != null) {
                // The consumer stops after this batch; the rest go back to the queue untried.
                attempts.returnedNotCounted(id);
                verdicts[i] = Verdict.REQUEUE;
                continue;
            }
            Decoded<T> decoded;
            try {
                decoded = decoder.decode(delivery);
            } catch (RuntimeException e) {
                log.info("delivery {} of id {} cannot be decoded ({}); rejected without requeue", tag(delivery), id, e.toString());
                verdicts[i] = Verdict.DEAD_LETTER;
                continue;
            } catch (Error e) {
                verdicts[i] = ofError(id, e);
                continue;
            }
            if (decoded == null) {
                // A defect of the decoder, but one it will repeat for this body on every redelivery:
                // requeued, it would hold its batch-mates in a loop with it.
                log.error("the content decoder answered null for delivery {} of id {}; rejected without requeue",
                        tag(delivery), id);
                verdicts[i] = Verdict.DEAD_LETTER;
                continue;
            }
            Message message = new Message(id, decoded.content(), decoded.originTime().orElse(null));
            positions.add(i);
            messages.add(message);
            values.put(message, decoded.value());
        }
        if (fatal != null) {
            for (int k = 0; k < positions.size(); k++) {
                attempts.returnedNotCounted(messages.get(k).id());
                verdicts[positions.get(k)] = Verdict.REQUEUE;
            }
        } else if (messages.size() == 1) {
            int position = positions.get(0);
            verdicts[position] = applyOne(messages.get(0), values.get(messages.get(0)), deliveries.get(position));
        } else if (!messages.isEmpty()) {
            applyBatch(messages, values, positions, deliveries, verdicts, stopping);
        }
        return Arrays.asList(verdicts);
    }

    private Verdict applyOne(Message message, T value, Delivery delivery) {
        if (fatal != null) {
            attempts.returnedNotCounted(message.id());
            return Verdict.REQUEUE;
        }
        try {
            Outcome<Void> outcome = inbox.apply(message.id(), message.content(), message.originTime(), tx -> {
                effect.apply(tx, message.id(), value);
                return null;
            });
            return ofOutcome(outcome);
        } catch (Exception e) {
            return ofFailure(message.id(), delivery, e);
        } catch (Error e) {
            return ofError(message.id(), e);
        }
    }

    private void applyBatch(List<Message> messages, Map<Message, T> values, List<Integer> positions,
            List<Delivery> deliveries, Verdict[] verdicts, BooleanSupplier stopping) {
        List<MessageResult<Void>> results;
        try {
            results = inbox.applyAll(messages, (tx, message) -> {
                effect.apply(tx, message.id(), values.get(message));
                return null;
            });
        } catch (RuntimeException e) {
            // The whole batch failed and nothing of it committed (or, for an unknown outcome, it
            // is not known whether it did).
            FailureKind kind = FailureKind.of(e);
            if (kind == FailureKind.RETRYABLE || kind == FailureKind.PERMANENT && isInboxWide(e)) {
                // Not the messages' fault: each gets the batch's verdict, counted against none.
                for (int k = 0; k < messages.size(); k++) {
                    verdicts[positions.get(k)] = ofFailure(messages.get(k).id(), deliveries.get(positions.get(k)), e);
                }
                return;
            }
            // A failure only the whole transaction met, such as a deferred constraint at COMMIT,
            // may be one message's doing. Blaming all would re-form the same batch on every
            // redelivery and dead-letter every message of it: each is applied alone instead, so
            // the others commit and only the failing one's attempt is counted.
            log.info("a batch of {} failed as a whole ({}); its messages are applied one at a time", messages.size(),
                    e.getClass().getSimpleName());
            applyEachAlone(messages, values, positions, deliveries, verdicts, stopping);
            return;
        } catch (Error e) {
            log.info("a batch of {} failed as a whole ({}); its messages are applied one at a time", messages.size(),
                    e.getClass().getSimpleName());
            applyEachAlone(messages, values, positions, deliveries, verdicts, stopping);
            if (fatal == null) {
                // No message threw it again alone (an OutOfMemoryError under the batch's load, say):
                // each is settled as it went alone, and the consumer still stops, as for any Error.
                fatal = e;
                log.error("a batch of {} threw {}, which none of its messages threw alone; the consumer stops",
                        messages.size(), e.getClass().getName(), e);
            }
            return;
        }
        for (int k = 0; k < results.size(); k++) {
            MessageResult<Void> result = results.get(k);
            int position = positions.get(k);
            verdicts[position] = result.outcome().isPresent()
                    ? ofOutcome(result.outcome().get())
                    : ofFailure(result.message().id(), deliveries.get(position), result.failure().orElseThrow());
        }
    }

    private void applyEachAlone(List<Message> messages, Map<Message, T> values, List<Integer> positions,
            List<Delivery> deliveries, Verdict[] verdicts, BooleanSupplier stopping) {
        for (int k = 0; k < messages.size(); k++) {
            int position = positions.get(k);
            if (stopping.getAsBoolean()) {
                // A transaction each, the rest could outlast the close's wait and be applied and
                // acked after close() returned: they go back to the queue untried, as a closed
                // channel would return them.
                attempts.returnedNotCounted(messages.get(k).id());
                verdicts[position] = Verdict.REQUEUE;
                continue;
            }
            verdicts[position] = applyOne(messages.get(k), values.get(messages.get(k)), deliveries.get(position));
        }
    }

    /**
     * An {@link Error} from the effect or the decoder: the delivery is rejected to the dead-letter
     * exchange, so that it cannot take down the next consumer it reaches, and the consumer stops
     * after this batch (see {@link #fatal()}).
     */
    private Verdict ofError(String id, Error error) {
        attempts.settled(id);
        fatal = error;
        log.error("applying id {} threw {}; rejected without requeue, and the consumer stops", id,
                error.getClass().getName(), error);
        return Verdict.DEAD_LETTER;
    }

    /** {@return the {@link Error} that stops the consumer, or {@code null} while none was thrown} */
    Error fatal() {
        return fatal;
    }

    private Verdict ofOutcome(Outcome<Void> outcome) {
        attempts.settled(outcome.id());
        if (outcome instanceof Outcome.Applied<Void>) {
            applied.increment();
            return Verdict.ACK;
        }
        if (outcome instanceof Outcome.Duplicate<Void>) {
            duplicates.increment();
            return Verdict.ACK;
        }
        Outcome.Conflict<Void> conflict = (Outcome.Conflict<Void>) outcome;
        log.info("id {} was first received at {} with different content; rejected without requeue",
                conflict.id(), conflict.firstReceivedAt());
        return Verdict.DEAD_LETTER;
    }

    private Verdict ofFailure(String id, Delivery delivery, Exception failure) {
        return switch (FailureKind.of(failure)) {
            case RETRYABLE -> {
                attempts.returnedNotCounted(id);
                log.debug("id {} not applied now ({}); requeued after the backoff", id, failure.toString());
                yield Verdict.REQUEUE;
            }
            case PERMANENT -> {
                if (isInboxWide(failure)) {
                    attempts.returnedNotCounted(id);
                    // A read-only or damaged database, a closed inbox: the message is not at fault,
                    // and dead-lettering would empty the queue into the dead letters during an outage.
                    log.warn("id {} not applied: the inbox cannot apply anything ({}); requeued after the backoff",
                            id, failure.toString());
                    yield Verdict.REQUEUE;
                }
                attempts.settled(id);
                log.info("id {} refused ({}); rejected without requeue", id, failure.getClass().getSimpleName());
                yield Verdict.DEAD_LETTER;
            }
            case EFFECT -> {
                if (attempts.failedAndMayRetry(id, delivery)) {
                    log.debug("the effect of id {} failed ({}); requeued after the backoff", id, failure.toString());
                    yield Verdict.REQUEUE;
                }
                log.warn("the effect of id {} failed on its last allowed attempt ({}); rejected without requeue",
                        id, failure.getClass().getName());
                yield Verdict.DEAD_LETTER;
            }
        };
    }

    /**
     * Whether a permanent failure is the inbox's own rather than this message's: the database
     * refuses the inbox (read-only, corrupt, a newer schema), or the inbox is closed. Messages
     * that are invalid or stale, and effects that broke their transaction, are the message's.
     */
    private static boolean isInboxWide(Exception failure) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof InboxException inbox) {
                return inbox instanceof InboxStorageException || inbox.getClass() == InboxException.class;
            }
        }
        return false;
    }

    private String idOf(Delivery delivery) {
        String id;
        try {
            id = ids.idOf(delivery);
        } catch (RuntimeException e) {
            log.info("delivery {}: the message id cannot be read ({})", tag(delivery), e.getClass().getSimpleName());
            return null;
        }
        return id == null || id.isEmpty() ? null : id;
    }

    private static long tag(Delivery delivery) {
        return delivery.getEnvelope().getDeliveryTag();
    }
}
