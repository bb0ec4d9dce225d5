package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.spi.InboxStore;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.StoreContract;
import java.time.Duration;
import org.jdbi.v3.core.Handle;

/** The store contract for {@link MariaDbStore}, on the fixture's renamed tables in a database of their own. */
class MariaDbStoreContractTest extends StoreContract {

    @Override
    protected InboxFixture openFixture() {
        return new MariaDbFixture();
    }

    @Override
    protected InboxStore<Handle> openStore(Duration busyTimeout) {
        MariaDbFixture renamed = (MariaDbFixture) fixture;
        return new MariaDbStore(renamed.jdbi(), renamed.builder().busyTimeout(busyTimeout).settings());
    }

    @Override
    protected InboxStore.Writers declaredWriters() {
        return InboxStore.Writers.CONCURRENT;
    }
}
