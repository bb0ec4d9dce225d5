package dev.idempotent.inbox.mariadb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idempotent.inbox.CommitMode;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.Message;
import dev.idempotent.inbox.MessageResult;
import dev.idempotent.inbox.Outcome;
import dev.idempotent.inbox.StoredResultException;
import dev.idempotent.inbox.jdbi.JdbiResultInbox;
import dev.idempotent.inbox.testkit.ResultEdgeContract;
import java.util.List;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Tries to make a stored result lie on MariaDB: the {@link ResultEdgeContract}, the concurrent
 * first applies under each isolation level a caller may use, and what only this database has (a
 * server packet limit below the result limit, DDL that commits implicitly).
 */
class MariaDbResultAttackTest extends ResultEdgeContract<MariaDbFixture> {

    @Override
    protected MariaDbFixture openFixture() {
        return new MariaDbFixture();
    }

    @Override
    protected String effectTableDdl() {
        return "CREATE TABLE effect (id VARCHAR(64) NOT NULL, caller VARCHAR(64) NOT NULL) ENGINE = InnoDB";
    }

    /**
     * Twelve threads apply the same three ids, each in a caller transaction of the given level and
     * each returning a result of its own: every duplicate carries exactly the result of the one call
     * that applied the id, never none and never its own.
     */
    @ParameterizedTest
    @EnumSource(value = TransactionIsolationLevel.class, names = {"READ_UNCOMMITTED", "READ_COMMITTED", "REPEATABLE_READ", "SERIALIZABLE"})
    void concurrentFirstAppliesGiveEveryDuplicateTheWinnersResult(TransactionIsolationLevel level) throws Exception {
        assertEveryDuplicateCarriesTheWinnersResult((inbox, call) -> inbox.jdbi().inTransaction(level, handle -> {
            // A snapshot taken before the winner commits, as a caller's earlier read takes it.
            handle.createQuery("SELECT count(*) FROM effect").mapTo(Long.class).one();
            return call.withHandle(handle);
        }));
    }

    private long maxAllowedPacket() {
        return fixture.admin().withHandle(handle -> handle.createQuery("SELECT @@max_allowed_packet")
                .mapTo(Long.class).one());
    }

    /**
     * A result within maxResultBytes whose statement would not fit the server's max_allowed_packet:
     * in a group commit it fails alone, as too large, and the others of the group keep their results.
     */
    @Test
    void aResultOverMaxAllowedPacketFailsAloneInAGroup() {
        long maxPacket = maxAllowedPacket();
        assumeTrue(maxPacket < (60 << 20), "a server whose packets take " + maxPacket);
        byte[] huge = new byte[(int) maxPacket + 1024];
        try (MariaDbInbox group = fixture.builder().name("packet").commitMode(CommitMode.GROUP)
                .maxResultBytes(64 << 20).build()) {
            JdbiResultInbox<byte[]> results = group.storingResults(BYTES);
            List<Message> messages = List.of(Message.of("m1", Content.of(1)), Message.of("m2", Content.of(2)),
                    Message.of("m3", Content.of(3)));

            List<MessageResult<byte[]>> batch = results.applyAll(messages,
                    (tx, message) -> message.id().equals("m2") ? huge : utf8(message.id()));

            assertEquals(StoredResultException.Kind.TOO_LARGE, assertInstanceOf(StoredResultException.class,
                    batch.get(1).failure().orElseThrow(), batch.get(1).toString()).kind());
            assertTrue(group.find("m2").isEmpty());
            assertArrayEquals(utf8("m1"), results.findResult("m1").orElseThrow().value());
            assertArrayEquals(utf8("m3"), results.findResult("m3").orElseThrow().value());
        }
    }

    /** The same in a joined call: the caller's transaction, and what it did before, survive. */
    @Test
    void aResultOverMaxAllowedPacketInAJoinedCallLeavesTheCallersTransactionUsable() {
        long maxPacket = maxAllowedPacket();
        assumeTrue(maxPacket < (60 << 20), "a server whose packets take " + maxPacket);
        byte[] huge = new byte[(int) maxPacket + 1024];
        createEffectTable();
        try (MariaDbInbox big = fixture.builder().name("packet").maxResultBytes(64 << 20).build();
                Handle caller = fixture.jdbi().open()) {
            JdbiResultInbox<byte[]> results = big.storingResults(BYTES);
            caller.begin();
            effect(caller, "before", "caller");

            StoredResultException failed = assertThrows(StoredResultException.class,
                    () -> results.applyIn(caller, "j", Content.of(1), tx -> huge));

            assertEquals(StoredResultException.Kind.TOO_LARGE, failed.kind());
            caller.commit();
            assertTrue(big.find("j").isEmpty());
            assertEquals(1, effectRows(), "the caller's own work committed");
            Outcome<byte[]> retry = results.apply("j", Content.of(1), tx -> utf8("small"));
            assertInstanceOf(Outcome.Applied.class, retry);
        }
    }

    /**
     * An effect whose DDL commits implicitly (MariaDB ends the transaction at CREATE TABLE): if its
     * result then fails as too large, the claim must not stay committed without a result, or every
     * retry would be a Duplicate carrying none.
     */
    @Test
    @Disabled("known, not fixed: MariaDB commits the claim with the effect's DDL, so a result that"
            + " then fails to encode (too large, codec or seal throwing) leaves the record without its result")
    void anEffectWhoseDdlCommitsImplicitlyLeavesNoRecordWithoutItsResult() {
        try (MariaDbInbox small = fixture.builder().name("ddl").maxResultBytes(4).build()) {
            JdbiResultInbox<byte[]> results = small.storingResults(BYTES);

            assertThrows(RuntimeException.class, () -> results.apply("d", Content.of(1), tx -> {
                tx.execute("CREATE TABLE ddl_effect (x INT)");
                return new byte[64];
            }));

            Outcome<byte[]> retry = results.apply("d", Content.of(1), tx -> new byte[] {1});
            if (retry instanceof Outcome.Duplicate<byte[]> duplicate) {
                assertTrue(duplicate.result().isStored(), "a duplicate of a record committed without its result");
            } else {
                assertInstanceOf(Outcome.Applied.class, retry);
            }
        }
    }
}
