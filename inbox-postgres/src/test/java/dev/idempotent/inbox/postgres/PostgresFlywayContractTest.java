package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.ValidatingFixture;

/**
 * The whole inbox contract on renamed tables Flyway made from the templates' location, with
 * inboxes that only validate them.
 */
class PostgresFlywayContractTest extends InboxContract {

    @Override
    protected InboxFixture openFixture() {
        PostgresFixture fixture = new PostgresFixture(false, PostgresFixture.Tables.RENAMED_BY_FLYWAY);
        return new ValidatingFixture(fixture);
    }
}
