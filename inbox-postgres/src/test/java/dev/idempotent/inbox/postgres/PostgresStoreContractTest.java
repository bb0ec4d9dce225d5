package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.StoreContract;
import java.time.Duration;
import org.jdbi.v3.core.Handle;

/** The store contract for {@link PostgresStore}, in a schema of its own on the test server. */
class PostgresStoreContractTest extends StoreContract {

    @Override
    protected InboxFixture openFixture() {
        return new PostgresFixture();
    }

    private PostgresFixture postgres() {
        return (PostgresFixture) fixture;
    }

    @Override
    protected InboxStore<Handle> openStore(Duration busyTimeout) {
        return new PostgresStore(fixture.jdbi(), busyTimeout, SchemaMode.CREATE, postgres().tables());
    }

    @Override
    protected InboxStore.Writers declaredWriters() {
        return InboxStore.Writers.CONCURRENT;
    }
}
