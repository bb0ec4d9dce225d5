package dev.idempotent.inbox.micrometer;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import dev.idempotent.inbox.testkit.GroupCommitProbe;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Handle;

/**
 * A caller whose effect holds the inbox's writer until released, so that the calls made meanwhile
 * queue up and meet in the next group; how many have queued is read from the group commit itself.
 */
final class HeldWriter implements AutoCloseable {

    static final long WAIT_SECONDS = 60;

    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final CompletableFuture<Outcome<Object>> outcome = new CompletableFuture<>();

    private HeldWriter(Inbox<Handle> inbox, String id) {
        Thread thread = new Thread(() -> {
            try {
                outcome.complete(inbox.apply(id, Content.of(1), tx -> {
                    entered.countDown();
                    release.await(WAIT_SECONDS, TimeUnit.SECONDS);
                    return null;
                }));
            } catch (Throwable t) {
                outcome.completeExceptionally(t);
            }
        }, "holder-" + id);
        thread.start();
    }

    /** Starts a call of {@code id} and returns once its effect runs, holding the writer. */
    static HeldWriter hold(Inbox<Handle> inbox, String id) throws InterruptedException {
        HeldWriter held = new HeldWriter(inbox, id);
        assertTrue(held.entered.await(WAIT_SECONDS, TimeUnit.SECONDS), "the holder's effect did not start");
        return held;
    }

    /** Waits until {@code count} calls wait in the group commit's queue, or fails after a deadline. */
    static void awaitQueued(SqliteInbox inbox, int count) {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(WAIT_SECONDS));
        while (GroupCommitProbe.queued(inbox) < count) {
            assertTrue(Instant.now().isBefore(deadline), "only " + GroupCommitProbe.queued(inbox) + " of " + count
                    + " calls queued");
            Thread.yield();
        }
    }

    /** Lets the holder's effect return, and its call commit. */
    Outcome<Object> release() throws Exception {
        release.countDown();
        return outcome.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        release.countDown();
    }
}
