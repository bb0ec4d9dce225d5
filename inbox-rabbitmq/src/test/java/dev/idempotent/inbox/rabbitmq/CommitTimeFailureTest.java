package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idempotent.inbox.Inbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A batch that fails only at COMMIT, on PostgreSQL and SQLite with a deferred foreign key: one message of a
 * hundred names an order that does not exist. The constraint is checked at COMMIT, so the batch's
 * transaction fails as a whole, and no message's own savepoint sees it. The consumer must not
 * blame all hundred: the 99 are applied and acked, the one is retried up to its limit and then
 * dead-lettered.
 */
class CommitTimeFailureTest {

    private RabbitFixture rabbit;
    private ServerDatabase database;
    private Inbox<Handle> inbox;
    private RabbitInboxConsumer consumer;

    @AfterEach
    void close() throws Exception {
        if (consumer != null) {
            consumer.close();
        }
        if (inbox != null) {
            inbox.close();
        }
        if (database != null) {
            database.close();
        }
        if (rabbit != null) {
            rabbit.close();
        }
    }

    @TempDir
    Path dir;

    @Test
    void oneMessageFailingAtCommitIsDeadLetteredAloneAndTheOther99AreApplied() throws Exception {
        database = new ServerDatabase(ServerDatabase.Kind.POSTGRES);
        inbox = database.inbox(Duration.ofSeconds(5));
        oneOfAHundredFailsAtCommit(database.jdbi);
    }

    /** SQLite checks a deferred foreign key at COMMIT too, once foreign keys are enforced. */
    @Test
    void oneMessageFailingAtCommitIsDeadLetteredAloneOnSqlite() throws Exception {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.enforceForeignKeys(true);
        SQLiteDataSource source = new SQLiteDataSource(config);
        source.setUrl("jdbc:sqlite:" + dir.resolve("shipments.db").toAbsolutePath());
        Jdbi jdbi = Jdbi.create(source);
        inbox = SqliteInbox.builder(jdbi).name("warehouse").build();
        oneOfAHundredFailsAtCommit(jdbi);
    }

    /**
     * A close asked for while a failed batch is applied one message at a time: the ones applied
     * alone so far are acked, the untried rest go back to the queue at once. Applying them all
     * first, a transaction each, would outlast the close's wait and leave the consumer applying
     * and acking after {@code close()} returned.
     */
    @Test
    void aCloseDuringTheOneAtATimeFallbackReturnsTheUntriedRest() throws Exception {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.enforceForeignKeys(true);
        SQLiteDataSource source = new SQLiteDataSource(config);
        source.setUrl("jdbc:sqlite:" + dir.resolve("shipments.db").toAbsolutePath());
        Jdbi jdbi = Jdbi.create(source);
        inbox = SqliteInbox.builder(jdbi).name("warehouse").build();
        rabbit = new RabbitFixture(false);
        jdbi.useHandle(h -> {
            h.execute("CREATE TABLE orders (id TEXT PRIMARY KEY)");
            h.execute("CREATE TABLE shipment (id TEXT PRIMARY KEY, order_id TEXT NOT NULL"
                    + " REFERENCES orders (id) DEFERRABLE INITIALLY DEFERRED)");
            h.execute("INSERT INTO orders (id) VALUES ('order-1')");
        });
        for (int i = 0; i < 50; i++) {
            rabbit.publish("shipment-" + i, i == 42 ? "order-missing" : "order-1");
        }
        await("all 50 published", () -> ready() == 50);
        java.util.concurrent.atomic.AtomicInteger runsOfThird = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<RabbitInboxConsumer> self =
                new java.util.concurrent.atomic.AtomicReference<>();
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, ContentDecoder.bytes(),
                        (Handle tx, String id, byte[] order) -> {
                            // Its second run is the fallback's: the service is asked to stop then.
                            // On the consumer's own thread, close() only asks, and returns.
                            if (id.equals("shipment-3") && runsOfThird.incrementAndGet() == 2) {
                                self.get().close();
                            }
                            tx.execute("INSERT INTO shipment (id, order_id) VALUES (?, ?)", id,
                                    new String(order, StandardCharsets.UTF_8));
                        })
                .prefetch(50).batchSize(50).batchLinger(Duration.ofMillis(500))
                .retryBackoff(Duration.ofMillis(50)).start(rabbit.connection);
        self.set(consumer);

        await("the consumer stopped", () -> !consumer.isOpen());
        consumer.close();
        await("the untried ones back in the queue", () -> ready() == 46);
        assertEquals(4, consumer.stats().acked(), "the ones applied alone before the close");
        long shipments = jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM shipment")
                .mapTo(Long.class).one());
        assertEquals(4, shipments);
        assertEquals(List.of(), rabbit.takeDeadLetters());
    }

    private void oneOfAHundredFailsAtCommit(Jdbi jdbi) throws Exception {
        rabbit = new RabbitFixture(false);
        jdbi.useHandle(h -> {
            h.execute("CREATE TABLE orders (id TEXT PRIMARY KEY)");
            h.execute("CREATE TABLE shipment (id TEXT PRIMARY KEY, order_id TEXT NOT NULL"
                    + " REFERENCES orders (id) DEFERRABLE INITIALLY DEFERRED)");
            h.execute("INSERT INTO orders (id) VALUES ('order-1')");
        });
        for (int i = 0; i < 100; i++) {
            // The 43rd names an order that does not exist: only the COMMIT finds out.
            rabbit.publish("shipment-" + i, i == 42 ? "order-missing" : "order-1");
        }
        await("all 100 published", () -> ready() == 100);

        int maxAttempts = 3;
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, ContentDecoder.bytes(),
                        (Handle tx, String id, byte[] order) -> tx.execute(
                                "INSERT INTO shipment (id, order_id) VALUES (?, ?)", id,
                                new String(order, StandardCharsets.UTF_8)))
                .prefetch(100).batchSize(100).batchLinger(Duration.ofMillis(500))
                .maxEffectAttempts(maxAttempts).retryBackoff(Duration.ofMillis(50))
                .start(rabbit.connection);

        await("99 acked and one dead-lettered",
                () -> consumer.stats().acked() == 99 && consumer.stats().deadLettered() == 1);
        consumer.close();

        assertEquals(99, consumer.stats().applied());
        assertEquals(maxAttempts - 1, consumer.stats().requeued(), "only the failing one was retried");
        long shipments = jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM shipment")
                .mapTo(Long.class).one());
        assertEquals(99, shipments);
        assertEquals(List.of("shipment-42"), rabbit.takeDeadLetters());
        assertEquals(0, rabbit.ready(), "nothing left in the queue");
    }

    private long ready() {
        try {
            return rabbit.ready();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
