package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.ValidatingFixture;

/**
 * The whole inbox contract on tables Flyway made from the templates, with the fixture's prefix in
 * the fixture's second database, with inboxes that only validate them.
 */
class MariaDbFlywayContractTest extends InboxContract {

    @Override
    protected InboxFixture openFixture() {
        MariaDbFixture fixture = new MariaDbFixture(false, true, false);
        Migrations.flywayPrefixed(fixture.tablesDatabase(), MariaDbFixture.PREFIX).load().migrate();
        return new ValidatingFixture(fixture);
    }
}
