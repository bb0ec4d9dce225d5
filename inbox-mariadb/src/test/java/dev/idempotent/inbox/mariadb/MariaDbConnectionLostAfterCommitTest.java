package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.OutcomeUnknownException;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.mariadb.jdbc.MariaDbPoolDataSource;

/**
 * The server answers the COMMIT and then the connection goes (the server is killed, or the network
 * drops), before the inbox's next statement on it, which puts the session's lock wait timeout back.
 * The transaction committed and the caller must not hear otherwise: the call returns its outcome,
 * or at worst says the outcome is unknown, never an error that says nothing was applied.
 */
class MariaDbConnectionLostAfterCommitTest {

    private static final String INBOX = "cut";
    // Jdbi's commit sends "set autocommit=1" after COMMIT; a cut there makes the commit itself fail,
    // which the inbox reports as outcome unknown. The cut comes on the inbox's next statement.
    private static final int JDBI_RESTORES_AUTOCOMMIT = 1;

    enum Call { APPLY, APPLY_ALL, GROUP }

    private final MariaDbFixture fixture = MariaDbFixture.defaultNames();

    @BeforeEach
    void createTable() {
        fixture.jdbi().useHandle(handle -> handle.execute(
                "CREATE TABLE applied (id VARCHAR(64) PRIMARY KEY, qty BIGINT NOT NULL, runs INT NOT NULL) ENGINE=InnoDB"));
    }

    @AfterEach
    void close() {
        fixture.close();
    }

    @ParameterizedTest
    @EnumSource(Call.class)
    void aConnectionLostAfterTheCommitsAnswerDoesNotTurnTheCommitIntoAFailure(Call call) throws Exception {
        // A pool of one connection: the call after the cut gets the lost connection again, unless
        // the inbox kept it from going back to the pool.
        try (CommitAnswerCutter cutter = new CommitAnswerCutter(MariaDbFixture.HOST, MariaDbFixture.PORT,
                        JDBI_RESTORES_AUTOCOMMIT);
                MariaDbPoolDataSource pool = new MariaDbPoolDataSource(fixture.jdbiViaUrl(cutter.port(),
                        "&useAffectedRows=true&maxPoolSize=1&user=" + MariaDbFixture.USER + "&password="
                        + MariaDbFixture.PASSWORD));
                Inbox<Handle> relayed = inbox(Jdbi.create(pool),
                        call == Call.GROUP ? CommitMode.GROUP : CommitMode.PER_CALLER);
                Inbox<Handle> other = inbox(fixture.jdbi(), CommitMode.PER_CALLER)) {
            cutter.arm();
            List<Message> batch = List.of(Message.of("snack-7", Content.of(7)), Message.of("snack-8", Content.of(8)));
            try {
                if (call == Call.APPLY_ALL) {
                    List<MessageResult<Integer>> results = relayed.applyAll(batch,
                            (tx, message) -> recordRun(tx, message.id(), message.id().equals("snack-7") ? 7 : 8));
                    for (MessageResult<Integer> result : results) {
                        assertInstanceOf(Outcome.Applied.class, result.outcome().orElseThrow(), result.toString());
                    }
                } else {
                    assertInstanceOf(Outcome.Applied.class,
                            relayed.apply("snack-7", Content.of(7), tx -> recordRun(tx, "snack-7", 7)));
                }
            } catch (OutcomeUnknownException acceptable) {
                // not wrong, though the COMMIT's answer did arrive
            } catch (RuntimeException e) {
                throw new AssertionError("the transaction committed, but the call failed with "
                        + e.getClass().getSimpleName() + ": " + e.getMessage(), e);
            }
            assertTrue(cutter.hasCut(), "the relay cut the connection after a COMMIT's answer");

            assertInstanceOf(Outcome.Duplicate.class,
                    other.apply("snack-7", Content.of(7), tx -> recordRun(tx, "snack-7", 7)), "it committed");
            assertInstanceOf(Outcome.Applied.class,
                    relayed.apply("snack-9", Content.of(9), tx -> recordRun(tx, "snack-9", 9)),
                    "the lost connection did not go back to the pool");
        }
        long ids = (call == Call.APPLY_ALL ? 2 : 1) + 1;
        assertEquals(Map.of("ids", ids, "total", (call == Call.APPLY_ALL ? 15L : 7L) + 9, "repeated", 0L, "inboxRows", ids),
                tally());
    }

    private static int recordRun(Handle tx, String id, long qty) {
        return tx.execute("INSERT INTO applied (id, qty, runs) VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE runs = runs + 1",
                id, qty);
    }

    private Map<String, Long> tally() {
        return fixture.jdbi().withHandle(handle -> {
            Map<String, Object> effects = handle.createQuery("SELECT COUNT(*) AS ids, COALESCE(SUM(qty), 0) AS total,"
                    + " COALESCE(SUM(runs > 1), 0) AS repeated FROM applied").mapToMap().one();
            long rows = handle.createQuery("SELECT COUNT(*) FROM inbox_message WHERE inbox = ?").bind(0, INBOX)
                    .mapTo(Long.class).one();
            return Map.of("ids", ((Number) effects.get("ids")).longValue(),
                    "total", ((Number) effects.get("total")).longValue(),
                    "repeated", ((Number) effects.get("repeated")).longValue(),
                    "inboxRows", rows);
        });
    }

    private static Inbox<Handle> inbox(Jdbi jdbi, CommitMode commitMode) {
        return MariaDbInbox.builder(jdbi).name(INBOX).commitMode(commitMode).build();
    }
}
