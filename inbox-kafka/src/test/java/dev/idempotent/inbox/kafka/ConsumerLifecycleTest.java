package dev.idempotent.inbox.kafka;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run()} and {@code close()} in the orders an application may call them, with no broker: a
 * consumer closed before it runs never connects, so none is needed.
 */
class ConsumerLifecycleTest {

    @TempDir
    Path dir;

    private KafkaInboxConsumer<Handle> consumer(JdbiInbox inbox) {
        // Nothing listens on port 9 of loopback; a consumer that tried to connect would never get anywhere.
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9",
                ConsumerConfig.GROUP_ID_CONFIG, "warehouse");
        return KafkaInboxConsumer.builder(inbox, config, (Handle tx, org.apache.kafka.clients.consumer.ConsumerRecord<String, byte[]> r) -> {})
                .topics("receipts")
                .commitTimeout(Duration.ofSeconds(1))
                .build();
    }

    /**
     * A shutdown hook may close the consumer before the thread meant to run it gets there: run()
     * then returns at once, as it does when close() comes while it runs, instead of claiming it
     * was called before.
     */
    @Test
    void runAfterCloseReturnsAtOnce() throws Exception {
        try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.SQLITE, dir);
                JdbiInbox inbox = db.inbox().build()) {
            KafkaInboxConsumer<Handle> consumer = consumer(inbox);
            consumer.close();
            Running running = Running.start(consumer);
            running.close(); // joins the thread, failing if run() never returned
            assertNull(running.failure(), () -> "run() after close() threw " + running.failure());
        }
    }

    /** A second run() is refused, whether the first ended by close() or not. */
    @Test
    void secondRunIsRefused() throws Exception {
        try (TestDatabase db = TestDatabase.create(TestDatabase.Kind.SQLITE, dir);
                JdbiInbox inbox = db.inbox().build()) {
            KafkaInboxConsumer<Handle> consumer = consumer(inbox);
            consumer.close();
            consumer.run();
            assertThrows(IllegalStateException.class, consumer::run);
        }
    }
}
