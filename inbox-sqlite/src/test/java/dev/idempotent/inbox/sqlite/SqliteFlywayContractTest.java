package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.ValidatingFixture;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole inbox contract on a file whose tables Flyway made from the prefixed location, with the
 * fixture's prefix as placeholder, and with inboxes that only validate them.
 */
class SqliteFlywayContractTest extends InboxContract {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        SqliteFixture fixture = new SqliteFixture(directory);
        Migrations.flywayPrefixed(fixture.file(), SqliteFixture.PREFIX);
        return new ValidatingFixture(fixture);
    }
}
