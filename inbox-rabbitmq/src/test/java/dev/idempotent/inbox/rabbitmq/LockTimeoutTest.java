package dev.idempotent.inbox.rabbitmq;

import static dev.idempotent.inbox.rabbitmq.RabbitFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lock the effect cannot get within the lock timeout the inbox set for its transaction: another
 * connection holds the row the effect updates. The database is busy, the effect is not at fault:
 * the failure is {@link FailureKind#RETRYABLE}, the exception reaches the caller unchanged, and the
 * consumer requeues the delivery, however many times, rather than count it against the effect's
 * attempt limit and dead-letter it.
 */
class LockTimeoutTest {

    @TempDir
    Path dir;

    private RabbitFixture rabbit;
    private ServerDatabase database;
    private Inbox<Handle> inbox;
    private RabbitInboxConsumer consumer;
    private Handle holder;

    @AfterEach
    void close() throws Exception {
        if (consumer != null) {
            consumer.close();
        }
        if (holder != null) {
            holder.close();
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

    @Test
    void postgresLockTimeoutInTheEffectIsRetryableAndRequeued() throws Exception {
        lockTimeoutInTheEffectIsRetryableAndRequeued(ServerDatabase.Kind.POSTGRES, Duration.ofMillis(200));
    }

    @Test
    void mariaDbLockWaitTimeoutInTheEffectIsRetryableAndRequeued() throws Exception {
        // innodb_lock_wait_timeout counts whole seconds.
        lockTimeoutInTheEffectIsRetryableAndRequeued(ServerDatabase.Kind.MARIADB, Duration.ofSeconds(1));
    }

    private void lockTimeoutInTheEffectIsRetryableAndRequeued(ServerDatabase.Kind kind, Duration busyTimeout)
            throws Exception {
        rabbit = new RabbitFixture(false);
        database = new ServerDatabase(kind);
        database.jdbi.useHandle(h -> {
            h.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
            h.execute("INSERT INTO stock (id, total) VALUES (1, 0)");
        });
        inbox = database.inbox(busyTimeout);
        holder = holdRow(database.jdbi);

        Exception thrown = assertThrows(Exception.class, () -> inbox.apply("direct", Content.of(1),
                tx -> tx.execute("UPDATE stock SET total = total + 1 WHERE id = 1")));
        assertFalse(thrown instanceof InboxException, "the effect's own exception, unchanged: " + thrown);
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(thrown), thrown.toString());

        // One attempt allowed: an effect failure would be dead-lettered at once.
        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, ContentDecoder.bytes(),
                        (Handle tx, String id, byte[] body) -> tx.execute("UPDATE stock SET total = total + 1 WHERE id = 1"))
                .maxEffectAttempts(1).retryBackoff(Duration.ofMillis(20)).start(rabbit.connection);
        rabbit.publish("snack-1", "1");
        await("two lock timeouts requeued", () -> consumer.stats().requeued() >= 2 || consumer.stats().deadLettered() > 0);
        assertEquals(0, consumer.stats().deadLettered(), "a lock timeout is not the effect's failure");

        holder.rollback();
        await("applied once the lock is free", () -> consumer.stats().acked() == 1);
        consumer.close();
        assertEquals(1, total(database.jdbi));
        assertEquals(List.of(), rabbit.takeDeadLetters());
    }

    /**
     * SQLite: another connection holds the write lock. The inbox's own transaction cannot begin
     * within its busy timeout, and it says so with an {@link dev.idempotent.inbox.InboxBusyException};
     * inside the inbox's transaction the effect holds the write lock, so its statements never wait.
     */
    @Test
    void sqliteBusyIsRetryableAndRequeued() throws Exception {
        rabbit = new RabbitFixture(false);
        Warehouse warehouse = new Warehouse(dir.resolve("stock.db"));
        SqliteInbox sqlite = warehouse.inbox(Duration.ofMillis(50), java.time.Clock.systemUTC());
        inbox = sqlite;
        holder = warehouse.open();
        holder.execute("BEGIN IMMEDIATE");

        Exception thrown = assertThrows(Exception.class, () -> inbox.apply("direct", Content.of(1), tx -> null));
        assertEquals(FailureKind.RETRYABLE, FailureKind.of(thrown), thrown.toString());

        consumer = RabbitInboxConsumer.builder(inbox, rabbit.queue, Warehouse.QUANTITY, Warehouse.ADD)
                .maxEffectAttempts(1).retryBackoff(Duration.ofMillis(20)).start(rabbit.connection);
        rabbit.publish("snack-1", "1");
        await("two busy attempts requeued", () -> consumer.stats().requeued() >= 2 || consumer.stats().deadLettered() > 0);
        assertEquals(0, consumer.stats().deadLettered());

        holder.execute("ROLLBACK");
        await("applied once the lock is free", () -> consumer.stats().acked() == 1);
        consumer.close();
        assertEquals(1, warehouse.total());
        assertEquals(List.of(), rabbit.takeDeadLetters());
    }

    /** Another connection updates the stock row and keeps its transaction open. */
    private static Handle holdRow(Jdbi jdbi) {
        Handle handle = jdbi.open();
        handle.begin();
        handle.execute("UPDATE stock SET total = total WHERE id = 1");
        return handle;
    }

    private static long total(Jdbi jdbi) {
        return jdbi.withHandle(h -> h.createQuery("SELECT total FROM stock WHERE id = 1").mapTo(Long.class).one());
    }
}
