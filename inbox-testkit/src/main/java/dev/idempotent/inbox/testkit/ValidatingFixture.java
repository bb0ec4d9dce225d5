package dev.idempotent.inbox.testkit;

import dev.idempotent.inbox.InboxBuilder;
import dev.idempotent.inbox.InboxTables;
import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.jdbi.JdbiInbox;
import java.time.Instant;
import java.util.Objects;
import org.jdbi.v3.core.Jdbi;

/**
 * A fixture whose database a migration tool (Flyway, Liquibase, a DBA's script) has prepared: it
 * is {@code base} in everything, except that its inboxes are built with {@link SchemaMode#VALIDATE}
 * and so run no DDL of their own. Run a contract over it to prove that the migrated schema is
 * everything the inbox needs.
 */
public final class ValidatingFixture implements InboxFixture {

    private final InboxFixture base;

    /**
     * @param base the fixture over the migrated database; closed with this one
     */
    public ValidatingFixture(InboxFixture base) {
        this.base = Objects.requireNonNull(base, "base");
    }

    @Override
    public Jdbi jdbi() {
        return base.jdbi();
    }

    @Override
    public InboxBuilder<? extends JdbiInbox> builder() {
        return base.builder().schema(SchemaMode.VALIDATE);
    }

    @Override
    public InboxTables tables() {
        return base.tables();
    }

    @Override
    public HeldLock holdWriteLock(String inbox, String id) {
        return base.holdWriteLock(inbox, id);
    }

    @Override
    public void insertReceivedRows(String inbox, String prefix, int count, Instant receivedAt) {
        base.insertReceivedRows(inbox, prefix, count, receivedAt);
    }

    @Override
    public boolean failedStatementAbortsTransaction() {
        return base.failedStatementAbortsTransaction();
    }

    @Override
    public void close() {
        base.close();
    }
}
