package dev.idempotent.inbox.rabbitmq;

import com.rabbitmq.client.Delivery;
import dev.idempotent.inbox.Content;

/**
 * Turns a delivery's body into what the consumer applies: its inbox content and the effect's value.
 *
 * <p>A body that cannot be decoded will not decode on a retry either: an exception thrown here
 * rejects the delivery without requeue, to the dead-letter exchange when the queue has one. The
 * decoder runs on the consumer's thread, outside any transaction.
 *
 * @param <T> the decoded value's type
 */
@FunctionalInterface
public interface ContentDecoder<T> {

    /**
     * Decodes one delivery.
     *
     * @param delivery the delivery, with its body and properties
     * @return the content and value; not {@code null} (a {@code null} is logged at ERROR and
     *     dead-letters the delivery, as a refused body does)
     * @throws RuntimeException for a body that cannot be decoded; the delivery is dead-lettered.
     *     Throw {@link dev.idempotent.inbox.InvalidMessageException} (as {@link Content#json} does)
     *     or any other runtime exception; its message is logged, so it must not quote the body.
     */
    Decoded<T> decode(Delivery delivery);

    /** {@return the decoder that takes the body as opaque bytes}, compared byte for byte */
    static ContentDecoder<byte[]> bytes() {
        return delivery -> Decoded.of(Content.ofBytes(delivery.getBody()), delivery.getBody());
    }
}
