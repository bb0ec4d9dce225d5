package dev.idempotent.inbox.sqlite;

import dev.idempotent.inbox.testkit.ArchitectureRules;
import org.junit.jupiter.api.Test;

/** The adapter's main classes use the engine only through its factory. */
class SqliteArchitectureTest {

    @Test
    void mainClassesUseInternalOnlyThroughTheEngineFactory() {
        ArchitectureRules.checkAdapter(SqliteInbox.class);
    }
}
