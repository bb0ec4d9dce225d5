package dev.idempotent.inbox.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idempotent.inbox.CallContext;
import dev.idempotent.inbox.CallObserver;
import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.InvalidMessageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.PendingOutcome;
import dev.idempotent.inbox.spi.StoreTransaction;
import dev.idempotent.inbox.testing.InMemoryDatabase;
import dev.idempotent.inbox.testing.InMemoryStore;
import dev.idempotent.inbox.testing.TestInbox;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * When the engine calls its {@link CallObserver}: start and open on the caller's thread, the
 * context captured inside the open scope where another thread may run the effect (group commit;
 * not at all where the caller's own thread runs it), and exactly one end per call, only once the
 * outcome is final.
 */
class InboxEngineObserverTest {

    private final InMemoryDatabase database = new InMemoryDatabase();
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final CallObserver observer = (inbox, id) -> {
        events.add("start " + inbox + " " + id);
        return new CallObserver.Observed() {
            @Override
            public CallContext.Scope open() {
                events.add("open");
                return () -> events.add("close");
            }

            @Override
            public void finished(Outcome<?> outcome) {
                events.add("finished " + outcome.getClass().getSimpleName() + " after " + database.commits()
                        + " commits");
            }

            @Override
            public void failed(Throwable failure) {
                events.add("failed " + failure.getClass().getSimpleName());
            }

            @Override
            public void rolledBack() {
                events.add("rolled back");
            }
        };
    };
    private final TestInbox inbox = TestInbox.builder(database)
            .name("receipts")
            .busyTimeout(Duration.ofSeconds(5))
            .callContext(() -> {
                events.add("capture");
                return () -> () -> {};
            })
            .observer(observer)
            .build();

    @AfterEach
    void close() {
        inbox.close();
    }

    @Test
    void anOwnApplyIsObservedFromItsCallToAfterItsCommit() {
        inbox.apply("snack-7", Content.of(7), tx -> tx.add("stock", 7));
        inbox.apply("snack-7", Content.of(7), tx -> tx.add("stock", 7));

        assertEquals(List.of("start receipts snack-7", "open", "close", "finished Applied after 1 commits",
                "start receipts snack-7", "open", "close", "finished Duplicate after 2 commits"), events);
    }

    @Test
    void underGroupCommitTheContextIsCapturedInsideTheObservedScope() {
        try (TestInbox grouped = TestInbox.builder(database)
                .name("receipts")
                .commitMode(CommitMode.GROUP)
                .callContext(() -> {
                    events.add("capture");
                    return () -> () -> {};
                })
                .observer(observer)
                .build()) {
            grouped.apply("snack-7", Content.of(7), tx -> tx.add("stock", 7));
        }

        assertEquals(List.of("start receipts snack-7", "open", "capture", "close", "finished Applied after 1 commits"),
                events);
    }

    @Test
    void aThrowingEffectEndsItsObservationAsFailedOnce() {
        IOException thrown = new IOException("no such item");
        IOException caught = assertThrows(IOException.class, () -> inbox.apply("snack-7", Content.of(7), tx -> {
            throw thrown;
        }));

        assertSame(thrown, caught);
        assertEquals(List.of("start receipts snack-7", "open", "close", "failed IOException"), events);
    }

    @Test
    void anInvalidIdIsObservedAndEndsAsFailed() {
        assertThrows(InvalidMessageException.class, () -> inbox.apply(" ", Content.of(7), tx -> 1L));
        StoreTransaction<InMemoryStore.Tx> caller = inbox.store().begin();
        assertThrows(InvalidMessageException.class, () -> inbox.applyJoined(caller.handle(), null, Content.of(7), null,
                tx -> 1L));
        caller.rollback();

        assertEquals(List.of("start receipts  ", "open", "close", "failed InvalidMessageException",
                "start receipts null", "open", "close", "failed InvalidMessageException"), events);
    }

    @Test
    void aJoinedCallEndsOnlyWhenItsCommitIsReported() {
        StoreTransaction<InMemoryStore.Tx> caller = inbox.store().begin();
        PendingOutcome<Long> pending = inbox.applyJoined(caller.handle(), "snack-7", Content.of(7), null,
                tx -> tx.add("stock", 7));
        assertEquals(List.of("start receipts snack-7", "open", "close"), events,
                "joined: no context to capture, the effect runs on the caller's thread; and no end yet");

        caller.commit();
        assertEquals(3, events.size(), "the commit alone is not seen");
        assertInstanceOf(Outcome.Applied.class, pending.committed());
        pending.committed();

        assertEquals(List.of("start receipts snack-7", "open", "close", "finished Applied after 1 commits"), events);
        assertThrows(IllegalStateException.class, pending::rolledBack);
        assertEquals(4, events.size(), "a refused report ends nothing");
    }

    @Test
    void aJoinedCallWhoseCallerRolledBackEndsAsRolledBackOnce() {
        StoreTransaction<InMemoryStore.Tx> caller = inbox.store().begin();
        PendingOutcome<Long> pending = inbox.applyJoined(caller.handle(), "snack-7", Content.of(7), null,
                tx -> tx.add("stock", 7));
        caller.rollback();
        pending.rolledBack();
        pending.rolledBack();
        assertThrows(IllegalStateException.class, pending::committed);

        assertEquals(List.of("start receipts snack-7", "open", "close", "rolled back"), events);
    }

    @Test
    void aJoinedCallWhoseEffectThrowsEndsAsFailedAtOnce() {
        StoreTransaction<InMemoryStore.Tx> caller = inbox.store().begin();
        assertThrows(IllegalStateException.class, () -> inbox.applyJoined(caller.handle(), "snack-7", Content.of(7),
                null, tx -> {
                    throw new IllegalStateException("the effect fails");
                }));
        caller.commit();

        assertEquals(List.of("start receipts snack-7", "open", "close", "failed IllegalStateException"), events);
    }

    @Test
    void anObserverThatFailsAtTheEndDoesNotChangeTheOutcome() {
        try (TestInbox failing = TestInbox.builder(database).name("failing").observer((name, id) ->
                new CallObserver.Observed() {
                    @Override
                    public CallContext.Scope open() {
                        return () -> {};
                    }

                    @Override
                    public void finished(Outcome<?> outcome) {
                        throw new IllegalStateException("the observer fails");
                    }

                    @Override
                    public void failed(Throwable failure) {
                        throw new IllegalStateException("the observer fails");
                    }

                    @Override
                    public void rolledBack() {}
                }).build()) {
            assertInstanceOf(Outcome.Applied.class, failing.apply("snack-7", Content.of(7), tx -> 1L));
            IOException thrown = new IOException("no such item");
            assertSame(thrown, assertThrows(IOException.class, () -> failing.apply("snack-8", Content.of(8), tx -> {
                throw thrown;
            })));
        }
    }

    @Test
    void noObserverReturnsOneSharedObservationForEveryCall() {
        assertSame(CallObserver.NONE.start("a", "1"), CallObserver.NONE.start("b", "2"));
        assertSame(CallObserver.NONE.start("a", "1").open(), CallObserver.NONE.start("b", "2").open());
    }
}
