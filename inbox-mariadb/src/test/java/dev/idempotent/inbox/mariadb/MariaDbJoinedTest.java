package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.InboxBusyException;
import dev.idempotent.inbox.InboxStorageException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.Stock;
import java.time.Duration;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Joined calls on MariaDB beyond the shared contract: the busy timeout bounds the claim's wait and
 * the session's own lock wait timeout is back afterwards, and a database without the inbox's
 * tables is refused by name.
 */
class MariaDbJoinedTest {

    private MariaDbFixture fixture;
    private MariaDbInbox inbox;
    private Stock stock;

    @BeforeEach
    void open() {
        fixture = new MariaDbFixture();
        inbox = MariaDbInbox.builder(fixture.jdbi()).name("joined").busyTimeout(Duration.ofSeconds(1)).build();
        stock = Stock.create(fixture.jdbi(), "joined");
    }

    @AfterEach
    void close() {
        inbox.close();
        fixture.close();
    }

    @Test
    void theBusyTimeoutBoundsTheClaimAndTheSessionsLockWaitTimeoutSurvives() {
        try (InboxFixture.HeldLock held = fixture.holdWriteLock("joined", "snack-7");
                Handle handle = fixture.jdbi().open()) {
            handle.execute("SET SESSION innodb_lock_wait_timeout = 37");
            handle.begin();
            InboxBusyException busy = assertThrows(InboxBusyException.class,
                    () -> inbox.applyIn(handle, "snack-7", Content.of(7), tx -> stock.add(tx, 7)));
            assertEquals(FailureKind.RETRYABLE, FailureKind.of(busy));
            assertEquals(37, handle.createQuery("SELECT @@SESSION.innodb_lock_wait_timeout").mapTo(Integer.class).one());
            assertInstanceOf(Outcome.Applied.class,
                    inbox.applyIn(handle, "drink-5", Content.of(5), tx -> stock.add(tx, 5)));
            assertEquals(37, handle.createQuery("SELECT @@SESSION.innodb_lock_wait_timeout").mapTo(Integer.class).one());
            handle.commit();
        }
        assertEquals(5, stock.total());
        assertEquals(1, Stock.inboxRows(fixture.jdbi(), "joined"));
    }

    @Test
    void aDatabaseWithoutTheInboxsTablesIsRefusedByName() {
        String bare = fixture.database() + "_bare";
        fixture.admin().useHandle(h -> h.execute("CREATE DATABASE " + bare));
        try {
            Jdbi elsewhere = Jdbi.create("jdbc:mariadb://" + MariaDbFixture.HOST + ":" + MariaDbFixture.PORT + "/" + bare,
                    MariaDbFixture.USER, MariaDbFixture.PASSWORD);
            try (Handle handle = elsewhere.open()) {
                handle.begin();
                InboxStorageException missing = assertThrows(InboxStorageException.class,
                        () -> inbox.applyIn(handle, "snack-7", Content.of(7), tx -> 1));
                assertEquals(InboxStorageException.Kind.SCHEMA_MISSING, missing.kind());
                handle.rollback();
            }
        } finally {
            fixture.admin().useHandle(h -> h.execute("DROP DATABASE " + bare));
        }
        assertEquals(0, Stock.inboxRows(fixture.jdbi(), "joined"));
    }
}
