package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

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

    @Test
    void aValuePicocliCannotConvertIsReportedWithoutTheJavaNames() {
        CommandLine commandLine = Main.commandLine();
        CommandLine.ParameterException failure = new CommandLine.ParameterException(commandLine,
                "Invalid value for option '--to': cannot convert 'x y' to class java.net.URI"
                        + " (java.net.URISyntaxException: Illegal character in path at index 1: x y)",
                commandLine.getSubcommands().get("publish").getCommandSpec().findOption("--to"), "x y");

        assertEquals("Invalid value for option '--to': 'x y' is not a valid URL", Main.withoutJavaNames(failure));
    }

    @Test
    void durationsReadAsTheSpringStarterReadsThem() {
        assertEquals(Duration.ofDays(30), DurationOption.parse("30d"));
        assertEquals(Duration.ofDays(30), DurationOption.parse("P30D"));
        assertEquals(Duration.ofHours(12), DurationOption.parse("12H"));
        assertEquals(Duration.ofMinutes(90), DurationOption.parse("90m"));
        assertEquals(Duration.ofMillis(500), DurationOption.parse("500ms"));
        assertEquals(Duration.ofSeconds(45), DurationOption.parse(" 45s "));
        for (String bad : new String[] {"30", "30 d", "d", "1.5h", "P", "99999999999999999d", "30dd", ""}) {
            assertThrows(CommandLine.TypeConversionException.class, () -> DurationOption.parse(bad), bad);
        }
    }
}
