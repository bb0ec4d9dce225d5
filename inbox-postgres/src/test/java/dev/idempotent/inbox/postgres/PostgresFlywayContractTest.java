package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.ValidatingFixture;

/** The whole inbox contract on a schema Flyway made, with inboxes that only validate it. */
class PostgresFlywayContractTest extends InboxContract {

    @Override
    protected InboxFixture openFixture() {
        PostgresFixture fixture = new PostgresFixture();
        Migrations.flyway(fixture);
        return new ValidatingFixture(fixture);
    }
}
