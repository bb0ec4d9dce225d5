package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * One in-process run of the examples' command line, as {@code main} runs it, with standard output
 * and standard error captured whole: what the commands print, what picocli prints and what the
 * log writes.
 */
record CommandRun(int exitCode, String out, String err) {

    // A refusal comes at once; a command that wrongly starts serving would block forever.
    private static final Duration HANG_GUARD = Duration.ofSeconds(60);

    /** Runs {@code inbox-examples ARGS} in this JVM. */
    static synchronized CommandRun of(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream originalOut = System.out;
        PrintStream originalErr = System.err;
        int exitCode;
        try (PrintStream capturedOut = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream capturedErr = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            System.setOut(capturedOut);
            System.setErr(capturedErr);
            // Made after the streams are swapped: picocli's writers wrap System.out and System.err.
            exitCode = assertTimeoutPreemptively(HANG_GUARD, () -> Main.commandLine().execute(args),
                    () -> "inbox-examples " + String.join(" ", args) + " did not return");
        } finally {
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
        return new CommandRun(exitCode, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The lines written to standard error. */
    List<String> errLines() {
        return err.lines().toList();
    }

    /**
     * Asserts the run was refused as a user's mistake is: {@code exitCode}, exactly one line on
     * standard error that starts with the command's name and names {@code option}, and no stack
     * trace.
     */
    CommandRun assertRefused(int exitCode, String command, String option) {
        System.out.println(command + " refused (exit " + this.exitCode + "): " + err.strip());
        assertAll(
                () -> assertEquals(exitCode, this.exitCode, "exit code; stderr: " + err),
                () -> assertEquals(1, errLines().size(), "one line on stderr: " + err),
                () -> assertTrue(err.startsWith(command + ": "), "starts with the command: " + err),
                () -> assertTrue(err.contains(option), "names " + option + ": " + err),
                () -> assertFalse(err.contains("Exception"), "no exception name: " + err),
                () -> assertFalse(err.contains("\tat ") || err.contains("at dev."), "no stack trace: " + err));
        return this;
    }
}
