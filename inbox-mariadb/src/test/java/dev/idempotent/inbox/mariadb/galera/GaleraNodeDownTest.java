package dev.idempotent.inbox.mariadb.galera;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.FailureKind;
import dev.idempotent.inbox.Inbox;
import dev.idempotent.inbox.InboxException;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.mariadb.CommitAnswerCutter;
import dev.idempotent.inbox.mariadb.MariaDbInbox;
import java.util.function.Function;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mariadb.jdbc.MariaDbPoolDataSource;

/**
 * A node that goes down, as one does for seconds after a kill until it has rejoined: a call whose
 * connection cannot be had has written nothing, and may be retried on another node. The node is
 * reached through a relay, and closing the relay takes it away.
 */
@OnGalera
class GaleraNodeDownTest {

    private final GaleraDatabase database = new GaleraDatabase();
    private MariaDbPoolDataSource pool;

    @AfterEach
    void close() {
        if (pool != null) {
            pool.close();
        }
        database.close();
    }

    @Test
    void aConnectionTheDriversPoolCannotHandOutIsRetryable() throws Exception {
        assertRetryableOnceDown(url -> {
            try {
                pool = new MariaDbPoolDataSource(url + "&maxPoolSize=2&user=" + GaleraCluster.USER + "&password="
                        + GaleraCluster.PASSWORD);
                return Jdbi.create(pool);
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aConnectionTheDriverCannotOpenIsRetryable() throws Exception {
        assertRetryableOnceDown(url -> Jdbi.create(url, GaleraCluster.USER, GaleraCluster.PASSWORD));
    }

    private void assertRetryableOnceDown(Function<String, Jdbi> jdbiOver) throws Exception {
        CommitAnswerCutter relay = new CommitAnswerCutter(GaleraCluster.HOST, GaleraCluster.port(1), 0); // never armed
        Jdbi jdbi = jdbiOver.apply("jdbc:mariadb://" + GaleraCluster.HOST + ":" + relay.port() + "/" + database.name()
                + "?useAffectedRows=true&connectTimeout=1000");
        try (Inbox<Handle> inbox = MariaDbInbox.builder(jdbi).name("down").build()) {
            assertInstanceOf(Outcome.Applied.class,
                    inbox.apply("snack-7", Content.of(7), tx -> GaleraDatabase.recordRun(tx, "snack-7", 7)));
            relay.close();

            // The first calls may meet the pool's connections that were open; later ones need new ones.
            for (int call = 0; call < 3; call++) {
                InboxException refused = assertThrows(InboxException.class, () -> inbox.apply("snack-8",
                        Content.of(8), tx -> GaleraDatabase.recordRun(tx, "snack-8", 8)));

                assertEquals(FailureKind.RETRYABLE, FailureKind.of(refused), "call " + call + ": "
                        + CallerErrors.describe(refused) + ": " + refused.getMessage());
            }
        }
    }
}
