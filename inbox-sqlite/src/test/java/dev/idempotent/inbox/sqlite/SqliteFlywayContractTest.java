package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.InboxContract;
import dev.idempotent.inbox.testkit.InboxFixture;
import dev.idempotent.inbox.testkit.ValidatingFixture;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The whole inbox contract on a file whose schema Flyway made, with inboxes that only validate it. */
class SqliteFlywayContractTest extends InboxContract {

    @TempDir
    Path directory;

    @Override
    protected InboxFixture openFixture() {
        SqliteFixture fixture = new SqliteFixture(directory);
        Migrations.flyway(fixture.file());
        return new ValidatingFixture(fixture);
    }
}
