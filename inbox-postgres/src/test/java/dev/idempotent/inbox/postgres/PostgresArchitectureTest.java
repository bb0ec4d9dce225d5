package dev.idempotent.inbox.postgres;

import dev.idempotent.inbox.testkit.ArchitectureRules;
import org.junit.jupiter.api.Test;

/** The adapter's main classes use the engine only through its factory. */
class PostgresArchitectureTest {

    @Test
    void mainClassesUseInternalOnlyThroughTheEngineFactory() {
        ArchitectureRules.checkAdapter(PostgresInbox.class);
    }
}
