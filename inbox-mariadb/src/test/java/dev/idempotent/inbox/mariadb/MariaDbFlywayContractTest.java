package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.ValidatingFixture;

/** The whole inbox contract on a schema Flyway made, with inboxes that only validate it. */
class MariaDbFlywayContractTest extends InboxContract {

    @Override
    protected InboxFixture openFixture() {
        MariaDbFixture fixture = new MariaDbFixture();
        Migrations.flyway(fixture);
        return new ValidatingFixture(fixture);
    }
}
