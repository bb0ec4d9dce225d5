package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code crash-lab}: what one halt per phase shows, said no stronger than it is. */
class CrashLabCommandTest {

    @TempDir
    Path dir;

    @Test
    void oneRunClaimsOneHaltPerPhaseAndNamesTheRepeatedTest() {
        CommandRun run = CommandRun.of("crash-lab", "--dir", dir.toString());
        System.out.println(run.out());

        assertEquals(0, run.exitCode(), run.out() + run.err());
        assertFalse(run.out().contains("PROVEN"), "one halt proves nothing in general: " + run.out());
        assertTrue(run.out().contains("verdict               counted exactly once in this run"), run.out());
        assertTrue(run.out().contains("PhaseKillTest halts 20 times per phase"), run.out());
    }

    @Test
    void dirThatIsAFileOrCannotBeCreatedIsABadOptionValue() throws IOException {
        Path file = Files.writeString(dir.resolve("a-file"), "");
        for (String command : new String[] {"crash-lab", "demo"}) {
            CommandRun.of(command, "--dir", file.toString()).assertRefused(2, command, "--dir " + file);
            CommandRun run = CommandRun.of(command, "--dir", file.resolve("sub").toString())
                    .assertRefused(2, command, "--dir " + file.resolve("sub"));
            assertTrue(run.err().contains("give a directory"), run.err());
        }
    }
}
