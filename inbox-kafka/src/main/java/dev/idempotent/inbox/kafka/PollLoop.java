package dev.idempotent.inbox.kafka;

import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.StaleMessageException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The poll thread of a {@link KafkaInboxConsumer}: every call on the Kafka consumer (poll, commit,
 * seek, pause) happens here, since a Kafka consumer is single-threaded; only {@link #close()} comes
 * from elsewhere, through {@code wakeup()}.
 */
final class PollLoop<H> implements ConsumerRebalanceListener {

    private static final Logger log = LoggerFactory.getLogger(KafkaInboxConsumer.class);
    private static final int ASSIGNMENT_READ_ATTEMPTS = 5;

    private final Consumer<String, byte[]> consumer;
    private final Set<String> topics;
    private final Inbox<H> inbox;
    private final RecordEffect<H> effect;
    private final RecordReader reader;
    private final DatabaseOffsets databaseOffsets; // null: positions are kept in Kafka only
    private final KafkaInboxListener<H> listener;
    private final int maxEffectAttempts;
    private final Duration retryBackoff;
    private final Duration pollTimeout;
    private final Duration commitTimeout;

    /** Positions committed in the database but not yet in Kafka. */
    private final Map<TopicPartition, OffsetAndMetadata> uncommitted = new HashMap<>();
    /** Partitions paused after a failure, with the System.nanoTime() at which to resume them. */
    private final Map<TopicPartition, Long> pausedUntil = new HashMap<>();
    /** The position each partition moved to last, committed in the database. */
    private final Map<TopicPartition, Long> committedPositions = new HashMap<>();
    /**
     * Partitions assigned (with positions in the database) whose stored position could not be read
     * yet, paused, with the System.nanoTime() at which to ask again.
     */
    private final Map<TopicPartition, Long> unpositioned = new HashMap<>();
    /** Effect failures so far of the record at a partition's position. */
    private final Map<TopicPartition, Attempts> effectFailures = new HashMap<>();

    /** What reading the stored positions on assignment threw, for run() to throw unwrapped. */
    private RuntimeException assignmentFailure;

    /** Set by the first run(). */
    private final AtomicBoolean ran = new AtomicBoolean();
    /** Set by the first of run() and close(): whichever it is owns the Kafka consumer's close. */
    private final AtomicBoolean started = new AtomicBoolean();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean closing;
    /** The thread in run(), for close() to know when a listener calls it from there. */
    private volatile Thread pollThread;

    PollLoop(Consumer<String, byte[]> consumer, Set<String> topics, Inbox<H> inbox, RecordEffect<H> effect,
            RecordReader reader, DatabaseOffsets databaseOffsets, KafkaInboxListener<H> listener,
            int maxEffectAttempts, Duration retryBackoff, Duration pollTimeout, Duration commitTimeout) {
        this.consumer = consumer;
        this.topics = topics;
        this.inbox = inbox;
        this.effect = effect;
        this.reader = reader;
        this.databaseOffsets = databaseOffsets;
        this.listener = listener;
        this.maxEffectAttempts = maxEffectAttempts;
        this.retryBackoff = retryBackoff;
        this.pollTimeout = pollTimeout;
        this.commitTimeout = commitTimeout;
    }

    void run() {
        if (!ran.compareAndSet(false, true)) {
            throw new IllegalStateException("run() was called before; a KafkaInboxConsumer runs once");
        }
        if (!started.compareAndSet(false, true)) {
            return; // close() came first and closed the Kafka consumer
        }
        pollThread = Thread.currentThread();
        try {
            if (closing) {
                return;
            }
            if (databaseOffsets != null) {
                requireOffsetTable();
            }
            consumer.subscribe(topics, this);
            while (!closing) {
                positionDuePartitions();
                resumeDuePartitions();
                ConsumerRecords<String, byte[]> records;
                try {
                    records = consumer.poll(nextPollTimeout());
                } catch (WakeupException e) {
                    continue; // close() was called: the loop's condition ends it
                } catch (KafkaException e) {
                    if (assignmentFailure != null && e.getCause() == assignmentFailure) {
                        // Kafka wraps what the rebalance callback threw; the inbox's own exception says more.
                        throw assignmentFailure;
                    }
                    throw e;
                }
                for (TopicPartition partition : records.partitions()) {
                    if (closing) {
                        break; // the remaining batches are abandoned unapplied; their positions stay
                    }
                    applyBatch(partition, records.records(partition));
                }
                if (!uncommitted.isEmpty()) {
                    commitToKafka(Set.copyOf(uncommitted.keySet()));
                }
            }
        } catch (WakeupException e) {
            if (!closing) {
                throw e;
            }
        } finally {
            try {
                if (!uncommitted.isEmpty()) {
                    commitToKafka(Set.copyOf(uncommitted.keySet()));
                }
            } catch (RuntimeException e) {
                log.info("kafka consumer: positions not committed to Kafka on close: {}", e.toString());
            } finally {
                try {
                    consumer.close(commitTimeout);
                } finally {
                    stopped.countDown();
                }
            }
        }
    }

    void close() {
        closing = true;
        if (!started.get()) {
            if (started.compareAndSet(false, true)) {
                consumer.close(commitTimeout);
                stopped.countDown();
                return;
            }
        }
        if (Thread.currentThread() == pollThread) {
            // A listener stops the consumer: the loop ends after this batch and closes the Kafka
            // consumer itself; waiting here would wait on this very thread.
            return;
        }
        consumer.wakeup();
        try {
            if (!stopped.await(commitTimeout.toMillis() * 2 + 1_000, TimeUnit.MILLISECONDS)) {
                log.warn("kafka consumer: the poll thread did not stop within {}", commitTimeout.multipliedBy(2));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One partition's records of one poll: one transaction, then the position. When that
     * transaction fails as a whole for a reason that is not the database's (a deferred constraint
     * at COMMIT, say), the records are applied again one by one, each in a transaction of its own,
     * so that an attempt counts against the record that failed and no other.
     */
    private void applyBatch(TopicPartition partition, List<ConsumerRecord<String, byte[]>> records) {
        RuntimeException failure = applyTogether(partition, records);
        if (failure == null) {
            return;
        }
        if (records.size() == 1 || FailureKind.of(failure) == FailureKind.RETRYABLE) {
            failedAlone(partition, records.get(0), failure);
            return;
        }
        log.info("kafka consumer: batch {}@{} ({} records) failed as a whole, applied again one by one: {}",
                partition, records.get(0).offset(), records.size(), failure.toString());
        for (ConsumerRecord<String, byte[]> record : records) {
            if (closing) {
                return; // the rest stays unapplied; its position was never moved
            }
            failure = applyTogether(partition, List.of(record));
            if (failure != null) {
                failedAlone(partition, record, failure);
                return;
            }
            if (positionOf(partition) != record.offset() + 1) {
                return; // not settled: applyTogether paused the partition at it
            }
        }
    }

    /**
     * Applies {@code records} in one transaction and moves the position past those settled; returns
     * the failure of the transaction as a whole, or {@code null}. Throws a permanent failure.
     */
    private RuntimeException applyTogether(TopicPartition partition, List<ConsumerRecord<String, byte[]>> records) {
        List<Slot> slots = new ArrayList<>(records.size());
        List<Message> messages = new ArrayList<>(records.size());
        Map<Message, ConsumerRecord<String, byte[]>> recordOf = new IdentityHashMap<>();
        for (ConsumerRecord<String, byte[]> record : records) {
            try {
                Message message = reader.read(record);
                if (message == null) {
                    throw new IllegalStateException("the record reader gave no message");
                }
                messages.add(message);
                recordOf.put(message, record);
                slots.add(new Slot(record, null));
            } catch (RuntimeException unreadable) {
                slots.add(new Slot(record, unreadable));
            }
        }
        long first = records.get(0).offset();
        Settled[] settled = {null};
        try {
            inbox.<Void, Exception>applyAll(messages, (tx, message) -> {
                effect.apply(tx, recordOf.get(message));
                return null;
            }, (tx, results) -> settled[0] = settle(tx, partition, slots, results));
        } catch (RuntimeException failure) {
            if (FailureKind.of(failure) == FailureKind.PERMANENT) {
                throw failure;
            }
            return failure;
        }
        // Only now, with the transaction committed, do the attempts it made count.
        if (settled[0].attempts() == null) {
            effectFailures.remove(partition);
        } else {
            effectFailures.put(partition, settled[0].attempts());
        }
        long next = settled[0].next();
        long end = records.get(records.size() - 1).offset() + 1;
        if (next > first) {
            moved(partition, next);
        }
        if (next < end) {
            retryLater(partition, next);
        }
        return null;
    }

    /**
     * After the transaction of {@code record} alone, or of a batch beginning with it, failed as a
     * whole: a failure that may pass is retried without limit; any other counts an attempt against
     * the record, which once its attempts are used up is handed to the listener in a transaction
     * of its own, and only then passed.
     */
    private void failedAlone(TopicPartition partition, ConsumerRecord<String, byte[]> record, RuntimeException failure) {
        FailureKind kind = FailureKind.of(failure);
        if (kind == FailureKind.RETRYABLE) {
            log.warn("kafka consumer: {}@{} not applied, retried after {}: {}", partition, record.offset(),
                    retryBackoff, failure.toString());
            retryLater(partition, record.offset());
            return;
        }
        Attempts attempts = counted(partition, record);
        if (attempts.failed() < maxEffectAttempts) {
            effectFailures.put(partition, attempts);
            log.warn("kafka consumer: record {}@{} failed its transaction (attempt {} of {}), retried after {}: {}",
                    partition, record.offset(), attempts.failed(), maxEffectAttempts, retryBackoff, failure.toString());
            retryLater(partition, record.offset());
            return;
        }
        long next = record.offset() + 1;
        try {
            inbox.<Void, RuntimeException>applyAll(List.of(), (tx, message) -> null, (tx, results) -> {
                log.warn("kafka consumer: record {}@{} rejected ({}) after {} attempts: {}", partition,
                        record.offset(), kind, attempts.failed(), failure.toString());
                listener.onRejected(tx, record, failure);
                if (databaseOffsets != null) {
                    databaseOffsets.write(DatabaseOffsets.handleOf(tx), partition, next);
                }
            });
        } catch (RuntimeException handOffFailed) {
            if (FailureKind.of(handOffFailed) == FailureKind.PERMANENT) {
                throw handOffFailed;
            }
            // Its attempts stay used up: the next failure hands it off again.
            effectFailures.put(partition, attempts);
            log.warn("kafka consumer: rejection of {}@{} not committed, retried after {}: {}", partition,
                    record.offset(), retryBackoff, handOffFailed.toString());
            retryLater(partition, record.offset());
            return;
        }
        effectFailures.remove(partition);
        moved(partition, next);
        // The fetch position is past the batch: the records after this one are fetched again now.
        retryLater(partition, next, 0);
    }

    /** The position moved to {@code next} in the database: commits it to Kafka and tells the listener. */
    private void moved(TopicPartition partition, long next) {
        uncommitted.put(partition, new OffsetAndMetadata(next));
        committedPositions.put(partition, next);
        commitToKafka(Set.of(partition));
        listener.onCommitted(partition, next);
    }

    private long positionOf(TopicPartition partition) {
        return committedPositions.getOrDefault(partition, -1L);
    }

    /** The attempts of {@code record} with one more failure. */
    private Attempts counted(TopicPartition partition, ConsumerRecord<String, byte[]> record) {
        Attempts attempts = effectFailures.get(partition);
        int failed = attempts != null && attempts.offset() == record.offset() ? attempts.failed() + 1 : 1;
        return new Attempts(record.offset(), failed);
    }

    /**
     * Inside the batch's transaction: reports conflicts and rejections, and finds the position, the
     * offset after the settled records that precede the first one to retry, and the attempts of
     * the record there. Changes no state of the loop, since the transaction may still fail.
     */
    private Settled settle(H tx, TopicPartition partition, List<Slot> slots, List<MessageResult<Void>> results) {
        long next = slots.get(0).record().offset();
        Attempts attempts = effectFailures.get(partition);
        int result = 0;
        for (Slot slot : slots) {
            ConsumerRecord<String, byte[]> record = slot.record();
            if (slot.unreadable() != null) {
                log.warn("kafka consumer: record {}@{} rejected, unreadable: {}", partition, record.offset(),
                        slot.unreadable().toString());
                listener.onRejected(tx, record, slot.unreadable());
                attempts = null;
                next = record.offset() + 1;
                continue;
            }
            MessageResult<Void> judged = results.get(result++);
            if (judged.outcome().isPresent()) {
                if (judged.outcome().get() instanceof Outcome.Conflict<Void> conflict) {
                    log.info("kafka consumer: record {}@{} id={} conflicts with the business applied first",
                            partition, record.offset(), conflict.id());
                    listener.onConflict(tx, record, conflict);
                }
                attempts = null;
                next = record.offset() + 1;
                continue;
            }
            Exception failure = judged.failure().orElseThrow();
            FailureKind kind = FailureKind.of(failure);
            if (kind == FailureKind.RETRYABLE) {
                break; // neither this record nor any after it counts as consumed
            }
            if (kind == FailureKind.EFFECT) {
                int failed = attempts != null && attempts.offset() == record.offset() ? attempts.failed() + 1 : 1;
                attempts = new Attempts(record.offset(), failed);
                if (failed < maxEffectAttempts) {
                    break;
                }
            }
            if (failure instanceof StaleMessageException) {
                // An expected answer to a resend older than the retention, not a fault.
                log.info("kafka consumer: record {}@{} id={} rejected as stale", partition, record.offset(),
                        judged.message().id());
            } else {
                log.warn("kafka consumer: record {}@{} id={} rejected ({}): {}", partition, record.offset(),
                        judged.message().id(), kind, failure.toString());
            }
            listener.onRejected(tx, record, failure);
            attempts = null;
            next = record.offset() + 1;
        }
        if (databaseOffsets != null && next > slots.get(0).record().offset()) {
            databaseOffsets.write(DatabaseOffsets.handleOf(tx), partition, next);
        }
        return new Settled(next, attempts);
    }

    private void retryLater(TopicPartition partition, long offset) {
        retryLater(partition, offset, retryBackoff.toNanos());
    }

    private void retryLater(TopicPartition partition, long offset, long delayNanos) {
        consumer.seek(partition, offset);
        consumer.pause(Set.of(partition));
        pausedUntil.put(partition, System.nanoTime() + delayNanos);
    }

    private void resumeDuePartitions() {
        long now = System.nanoTime();
        List<TopicPartition> due = new ArrayList<>();
        pausedUntil.forEach((partition, until) -> {
            if (until - now <= 0) {
                due.add(partition);
            }
        });
        if (!due.isEmpty()) {
            due.forEach(pausedUntil::remove);
            consumer.resume(due);
        }
    }

    private Duration nextPollTimeout() {
        long now = System.nanoTime();
        long wait = pollTimeout.toNanos();
        for (long until : pausedUntil.values()) {
            wait = Math.min(wait, Math.max(0, until - now));
        }
        for (long at : unpositioned.values()) {
            wait = Math.min(wait, Math.max(0, at - now));
        }
        return Duration.ofNanos(Math.max(wait, TimeUnit.MILLISECONDS.toNanos(1)));
    }

    /**
     * Commits the positions of {@code partitions} that are in the database but not yet in Kafka. A
     * failure keeps them for the next try: positions are cumulative, so a later commit covers an
     * earlier one, and a batch whose commit never reaches Kafka is redelivered as duplicates.
     */
    private void commitToKafka(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
        for (TopicPartition partition : partitions) {
            OffsetAndMetadata position = uncommitted.get(partition);
            if (position != null) {
                positions.put(partition, position);
            }
        }
        if (positions.isEmpty()) {
            return;
        }
        try {
            consumer.commitSync(positions, commitTimeout);
            positions.forEach(uncommitted::remove);
        } catch (WakeupException e) {
            throw e;
        } catch (KafkaException e) {
            log.info("kafka consumer: commit of {} to Kafka failed, kept for the next try: {}", positions.keySet(),
                    e.toString());
        }
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        // No batch is in flight here: each was committed in the database before this poll began.
        try {
            commitToKafka(partitions);
        } catch (WakeupException e) {
            closing = true;
        }
        forget(partitions);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
        // Another member may own them already: committing for them would be refused, or wrong.
        forget(partitions);
    }

    private void forget(Collection<TopicPartition> partitions) {
        for (TopicPartition partition : partitions) {
            uncommitted.remove(partition);
            pausedUntil.remove(partition);
            effectFailures.remove(partition);
            committedPositions.remove(partition);
            unpositioned.remove(partition);
        }
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        if (databaseOffsets == null || partitions.isEmpty()) {
            return;
        }
        positionFromDatabase(List.copyOf(partitions));
    }

    /**
     * Seeks {@code partitions} to their positions stored in the database. While the database cannot
     * say for a reason that may pass (busy, away), they stay paused and are asked about again after
     * the retry backoff: consuming from Kafka's own offset instead could pass records the database
     * never saw applied. Any other failure ends {@link #run()}.
     */
    private void positionFromDatabase(List<TopicPartition> partitions) {
        Map<TopicPartition, Long> stored;
        try {
            stored = readStoredPositions(partitions);
        } catch (RuntimeException e) {
            if (FailureKind.of(e) != FailureKind.RETRYABLE) {
                assignmentFailure = e;
                throw e;
            }
            log.warn("kafka consumer: stored positions of {} not read, the partitions wait {}: {}", partitions,
                    retryBackoff, e.toString());
            consumer.pause(partitions);
            long at = System.nanoTime() + retryBackoff.toNanos();
            for (TopicPartition partition : partitions) {
                pausedUntil.remove(partition);
                unpositioned.put(partition, at);
            }
            return;
        }
        stored.forEach((partition, offset) -> {
            log.debug("kafka consumer: {} resumes at {}, the position stored in the database", partition, offset);
            consumer.seek(partition, offset);
        });
        List<TopicPartition> waited = partitions.stream().filter(p -> unpositioned.remove(p) != null).toList();
        if (!waited.isEmpty()) {
            consumer.resume(waited);
        }
    }

    /** Asks the database again for the positions of partitions assigned while it could not say. */
    private void positionDuePartitions() {
        long now = System.nanoTime();
        List<TopicPartition> due = new ArrayList<>();
        unpositioned.forEach((partition, at) -> {
            if (at - now <= 0) {
                due.add(partition);
            }
        });
        if (!due.isEmpty()) {
            positionFromDatabase(due);
        }
    }

    /**
     * Runs before subscribing, in a transaction of the inbox itself (an empty batch): refuses a
     * database without the positions' table, which the consumer never creates.
     */
    private void requireOffsetTable() {
        try {
            inbox.<Void, RuntimeException>applyAll(List.of(), (tx, message) -> null,
                    (tx, results) -> databaseOffsets.requireTable(DatabaseOffsets.handleOf(tx)));
        } catch (IllegalStateException e) {
            throw e; // not a Jdbi inbox
        } catch (RuntimeException e) {
            if (FailureKind.of(e) == FailureKind.PERMANENT) {
                throw e;
            }
            // A database that is busy or away now is met again, and retried, on assignment.
            log.info("kafka consumer: could not check table {} before subscribing: {}", databaseOffsets.table(),
                    e.toString());
        }
    }

    /**
     * Reads in a transaction of the inbox itself (an empty batch) so that the handle is the one
     * positions are written through. Retried a few times: the database may be busy.
     */
    private Map<TopicPartition, Long> readStoredPositions(Collection<TopicPartition> partitions) {
        RuntimeException last = null;
        for (int attempt = 1; attempt <= ASSIGNMENT_READ_ATTEMPTS; attempt++) {
            Map<TopicPartition, Long> stored = new HashMap<>();
            try {
                inbox.<Void, RuntimeException>applyAll(List.of(), (tx, message) -> null,
                        (tx, results) -> stored.putAll(databaseOffsets.read(DatabaseOffsets.handleOf(tx), partitions)));
                return stored;
            } catch (IllegalStateException e) {
                throw e; // not a Jdbi inbox: retrying cannot help
            } catch (RuntimeException e) {
                if (e instanceof InboxException && FailureKind.of(e) == FailureKind.PERMANENT) {
                    throw e;
                }
                last = e;
                log.info("kafka consumer: reading stored positions failed (attempt {}): {}", attempt, e.toString());
            }
        }
        throw last;
    }

    private record Slot(ConsumerRecord<String, byte[]> record, RuntimeException unreadable) {}

    private record Attempts(long offset, int failed) {}

    /** What a batch's transaction settled: the position, and the attempts of the record there (or null). */
    private record Settled(long next, Attempts attempts) {}
}
