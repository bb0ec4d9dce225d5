package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Outcome;
import java.sql.Connection;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mariadb.jdbc.MariaDbPoolDataSource;

/**
 * A connection the MariaDB driver's own pool cannot hand out (all are taken, or its server is gone)
 * fails the call before anything is written: the pool says so with neither an error number nor a
 * SQLState, and the inbox reports it as unavailable, to be retried. A wrong password the server
 * reports stays what it is.
 */
class MariaDbConnectionUnavailableTest {

    private final MariaDbFixture fixture = MariaDbFixture.defaultNames();
    private final AtomicInteger effects = new AtomicInteger();
    private MariaDbPoolDataSource pool;

    @AfterEach
    void close() {
        if (pool != null) {
            pool.close();
        }
        fixture.close();
    }

    private Jdbi pooled(int port, String options) throws Exception {
        pool = new MariaDbPoolDataSource(fixture.jdbiViaUrl(port, "&useAffectedRows=true&maxPoolSize=1"
                + "&connectTimeout=500&user=" + MariaDbFixture.USER + "&password=" + MariaDbFixture.PASSWORD + options));
        return Jdbi.create(pool);
    }

    private Integer effect(Handle tx) {
        return effects.incrementAndGet();
    }

    @Test
    void aConnectionThePoolCannotHandOutInTimeIsRetryableAndNothingIsWritten() throws Exception {
        try (Inbox<Handle> inbox = MariaDbInbox.builder(pooled(MariaDbFixture.PORT, "")).name("pool").build();
                Connection taken = pool.getConnection()) {
            InboxException refused = assertThrows(InboxException.class,
                    () -> inbox.apply("snack-7", Content.of(7), this::effect));

            assertEquals(InboxStorageException.Kind.UNAVAILABLE,
                    assertInstanceOf(InboxStorageException.class, refused).kind(), refused.getMessage());
            assertEquals(FailureKind.RETRYABLE, FailureKind.of(refused));
            assertEquals(0, effects.get());
        }
        try (Inbox<Handle> inbox = MariaDbInbox.builder(pooled(MariaDbFixture.PORT, "")).name("pool").build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), this::effect),
                    "nothing was written the first time");
        }
    }

    @Test
    void aServerThePoolCanNoLongerReachIsRetryable() throws Exception {
        CommitAnswerCutter relay = new CommitAnswerCutter(MariaDbFixture.HOST, MariaDbFixture.PORT, 0); // never armed
        try (Inbox<Handle> inbox = MariaDbInbox.builder(pooled(relay.port(), "")).name("gone").build()) {
            assertInstanceOf(Outcome.Applied.class, inbox.apply("snack-7", Content.of(7), this::effect));
            relay.close();

            // The first call may meet the pool's connection that was open; later ones need a new one.
            for (int call = 0; call < 3; call++) {
                InboxException refused = assertThrows(InboxException.class,
                        () -> inbox.apply("snack-8", Content.of(8), this::effect));

                assertEquals(FailureKind.RETRYABLE, FailureKind.of(refused), "call " + call + ": "
                        + refused.getClass().getSimpleName() + ": " + refused.getMessage());
            }
        }
    }

    @Test
    void aWrongPasswordTheServerReportsIsNotMadeRetryable() {
        // The driver's own pool only logs why it has no connection; the driver alone hands on the
        // server's 1045 (SQLState 28000).
        Jdbi jdbi = Jdbi.create(fixture.url(""), MariaDbFixture.USER, MariaDbFixture.PASSWORD + "wrong");
        InboxException refused = assertThrows(InboxException.class, () -> MariaDbInbox.builder(jdbi).build());

        assertEquals(InboxStorageException.Kind.OTHER,
                assertInstanceOf(InboxStorageException.class, refused).kind(), refused.getMessage());
        assertEquals(FailureKind.EFFECT, FailureKind.of(refused));
    }
}
