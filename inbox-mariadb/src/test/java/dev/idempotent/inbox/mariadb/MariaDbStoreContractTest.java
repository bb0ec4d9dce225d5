package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.SchemaMode;
import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.StoreContract;
import java.time.Duration;
import org.jdbi.v3.core.Handle;

/** The store contract for {@link MariaDbStore}, in a database of its own on the test server. */
class MariaDbStoreContractTest extends StoreContract {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture();
    }

    @Override
    protected InboxStore<Handle> openStore(Duration busyTimeout) {
        return new MariaDbStore(fixture.jdbi(), busyTimeout, SchemaMode.CREATE);
    }

    @Override
    protected InboxStore.Writers declaredWriters() {
        return InboxStore.Writers.CONCURRENT;
    }
}
