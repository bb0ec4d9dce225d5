package dev.idempotent.inbox.mariadb;

import dev.idempotent.inbox.testkit.ArchitectureRules;
import org.junit.jupiter.api.Test;

/** The adapter's main classes use the engine only through its factory. */
class MariaDbArchitectureTest {

    @Test
    void mainClassesUseInternalOnlyThroughTheEngineFactory() {
        ArchitectureRules.checkAdapter(MariaDbInbox.class);
    }
}
