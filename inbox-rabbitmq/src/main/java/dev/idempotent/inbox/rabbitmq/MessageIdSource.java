package dev.idempotent.inbox.rabbitmq;

import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.LongString;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Where a delivery's business id comes from: the {@code message-id} property by default, a
 * header, or the body. The id must be the sender's, the same on every resend of one business;
 * never the broker's delivery tag, which changes with each redelivery.
 *
 * <p>A source answers {@code null} when the delivery carries no id; the consumer then rejects the
 * delivery without requeue (to the dead-letter exchange, when the queue has one), because no
 * retry can give it one. An {@link Error} it throws is treated as one from the effect: that
 * delivery is rejected without requeue and the consumer stops (see {@link ConsumerStopListener}).
 */
@FunctionalInterface
public interface MessageIdSource {

    /**
     * {@return the business id of {@code delivery}, or {@code null} when it carries none}; never
     * throws for a delivery that merely lacks an id
     *
     * @param delivery the delivery as the broker sent it
     */
    String idOf(Delivery delivery);

    /** {@return the source that reads the AMQP {@code message-id} property}, the default */
    static MessageIdSource messageId() {
        return delivery -> delivery.getProperties().getMessageId();
    }

    /**
     * {@return the source that reads the header {@code name}}: a string, or the long string AMQP
     * carries text in; a header of any other type counts as absent
     *
     * @param name the header's name; not {@code null} or blank
     * @throws IllegalArgumentException if {@code name} is blank
     */
    static MessageIdSource header(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("header name must not be blank");
        }
        return delivery -> {
            Map<String, Object> headers = delivery.getProperties().getHeaders();
            Object value = headers == null ? null : headers.get(name);
            if (value instanceof LongString text) {
                return text.toString();
            }
            return value instanceof String text ? text : null;
        };
    }

    /**
     * {@return the source that computes the id from the body}, for senders that put it there
     *
     * @param fromBody reads the id from the body bytes; answers {@code null} when there is none.
     *     An exception it throws counts as no id.
     */
    static MessageIdSource body(Function<byte[], String> fromBody) {
        Objects.requireNonNull(fromBody, "fromBody");
        return delivery -> fromBody.apply(delivery.getBody());
    }
}
