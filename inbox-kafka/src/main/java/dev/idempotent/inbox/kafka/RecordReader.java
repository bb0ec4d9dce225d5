package dev.idempotent.inbox.kafka;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Message;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Turns a record into the inbox message that guards it: its business id and what "the same
 * business" means.
 */
@FunctionalInterface
public interface RecordReader {

    /**
     * The default: the record's key is the id, its value's bytes are the content.
     *
     * @return a reader that refuses a record without a key with an {@link InvalidMessageException}
     */
    static RecordReader keyAndBytes() {
        return record -> {
            if (record.key() == null) {
                throw new InvalidMessageException(InvalidMessageException.Problem.ID_MISSING,
                        "record " + record.topic() + "-" + record.partition() + "@" + record.offset()
                                + " has no key, which is its business id");
            }
            return Message.of(record.key(), Content.ofBytes(record.value() == null ? new byte[0] : record.value()));
        };
    }

    /**
     * Reads the message of {@code record}.
     *
     * @param record the record
     * @return its message, never {@code null}
     * @throws RuntimeException when the record cannot be read: it is never applied, and is reported
     *     to {@link KafkaInboxListener#onRejected} in the batch's transaction
     */
    Message read(ConsumerRecord<String, byte[]> record);
}
