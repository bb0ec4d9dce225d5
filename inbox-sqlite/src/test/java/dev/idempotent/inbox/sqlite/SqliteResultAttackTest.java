package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.testkit.ResultEdgeContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tries to make a stored result lie on SQLite: the {@link ResultEdgeContract} on a real file, its
 * inboxes committing per caller unless a test says otherwise, and the concurrent first applies
 * under each commit mode.
 */
class SqliteResultAttackTest extends ResultEdgeContract<SqliteFixture> {

    @TempDir
    Path directory;

    @Override
    protected SqliteFixture openFixture() {
        return new SqliteFixture(directory, CommitMode.PER_CALLER);
    }

    /**
     * Twelve threads apply the same three ids, half of them in a caller transaction, under each commit mode, and
     * each returning a result of its own: every duplicate carries exactly the result of the one call
     * that applied the id, never none and never its own.
     */
    @ParameterizedTest
    @EnumSource(CommitMode.class)
    void concurrentFirstAppliesGiveEveryDuplicateTheWinnersResult(CommitMode mode) throws Exception {
        reopenInbox(builder -> builder.commitMode(mode));
        assertEveryDuplicateCarriesTheWinnersResult((inbox, call) -> inbox.jdbi().inTransaction(call));
    }
}
