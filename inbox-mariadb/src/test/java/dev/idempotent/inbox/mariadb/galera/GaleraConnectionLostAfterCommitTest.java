package dev.idempotent.inbox.mariadb.galera;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.OutcomeUnknownException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import dev.idempotent.inbox.mariadb.galera.Calls.Mode;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The node answers the COMMIT and then goes (it is killed, or the network drops), before the
 * inbox's next statement on that connection, which puts the session's lock wait timeout back: the
 * soak's kill of a node meets this now and then.
 * The transaction committed and the caller must not hear otherwise: the call returns its outcome,
 * or at worst says the outcome is unknown, never an error that says nothing was applied.
 */
@OnGalera
class GaleraConnectionLostAfterCommitTest {

    private static final String INBOX = "cut";
    // Jdbi's commit sends "set autocommit=1" after COMMIT; a cut there makes the commit itself fail,
    // which the inbox reports as outcome unknown. The cut comes on the inbox's next statement.
    private static final int JDBI_RESTORES_AUTOCOMMIT = 1;

    private final GaleraDatabase database = new GaleraDatabase();

    @AfterEach
    void close() {
        database.close();
    }

    @ParameterizedTest
    @EnumSource(value = Mode.class, names = {"APPLY", "APPLY_ALL", "GROUP"})
    void aConnectionLostAfterTheCommitsAnswerDoesNotTurnTheCommitIntoAFailure(Mode mode) throws Exception {
        Jdbi direct = database.jdbi(1, "");
        try (CommitAnswerCutter cutter = new CommitAnswerCutter(GaleraCluster.HOST, GaleraCluster.port(1),
                        JDBI_RESTORES_AUTOCOMMIT);
                Inbox<Handle> relayed = inbox(Jdbi.create("jdbc:mariadb://" + GaleraCluster.HOST + ":" + cutter.port()
                        + "/" + database.name() + "?useAffectedRows=true", GaleraCluster.USER, GaleraCluster.PASSWORD),
                        mode);
                Inbox<Handle> other = inbox(direct, CommitMode.PER_CALLER)) {
            cutter.arm();
            List<Message> batch = List.of(Message.of("snack-7", Content.of(7)), Message.of("snack-8", Content.of(8)));
            try {
                if (mode == Mode.APPLY_ALL) {
                    List<MessageResult<Integer>> results = relayed.applyAll(batch,
                            (tx, message) -> GaleraDatabase.recordRun(tx, message.id(), Calls.qty(message)));
                    for (MessageResult<Integer> result : results) {
                        assertInstanceOf(Outcome.Applied.class, result.outcome().orElseThrow(), result.toString());
                    }
                } else {
                    assertInstanceOf(Outcome.Applied.class, relayed.apply("snack-7", Content.of(7),
                            tx -> GaleraDatabase.recordRun(tx, "snack-7", 7)));
                }
            } catch (OutcomeUnknownException acceptable) {
                // not wrong, though the COMMIT's answer did arrive
            } catch (RuntimeException e) {
                throw new AssertionError("the transaction committed, but the call failed with "
                        + CallerErrors.describe(e) + ": " + e.getMessage(), e);
            }
            assertTrue(cutter.hasCut(), "the relay cut the connection after a COMMIT's answer");

            assertInstanceOf(Outcome.Duplicate.class, other.apply("snack-7", Content.of(7),
                    tx -> GaleraDatabase.recordRun(tx, "snack-7", 7)), "it committed");
        }
        long ids = mode == Mode.APPLY_ALL ? 2 : 1;
        assertEquals(Map.of("ids", ids, "total", mode == Mode.APPLY_ALL ? 15L : 7L, "repeated", 0L, "inboxRows", ids),
                database.tally(1, INBOX));
    }

    private static Inbox<Handle> inbox(Jdbi jdbi, Mode mode) {
        return inbox(jdbi, mode == Mode.GROUP ? CommitMode.GROUP : CommitMode.PER_CALLER);
    }

    private static Inbox<Handle> inbox(Jdbi jdbi, CommitMode commitMode) {
        return MariaDbInbox.builder(jdbi).name(INBOX).commitMode(commitMode).build();
    }
}
