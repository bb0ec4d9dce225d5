package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.api.Test;

class MainTest {

    @Test
    void versionOptionPrintsTheBuildsVersion() {
        // Set by the build from the POM, so that the test knows what the jar should say.
        String expected = System.getProperty("inbox.examples.expectedVersion");
        assertNotNull(expected, "run through Maven, which passes the project version");
        for (String[] args : new String[][] {{"--version"}, {"-V"}, {"serve", "--version"}, {"publish", "-V"}}) {
            CommandRun run = CommandRun.of(args);
            assertEquals(0, run.exitCode(), String.join(" ", args));
            assertEquals("inbox-examples " + expected, run.out().strip(), String.join(" ", args));
        }
    }
}
