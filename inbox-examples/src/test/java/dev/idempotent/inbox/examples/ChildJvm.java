package dev.idempotent.inbox.examples;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts {@code inbox-examples} commands in a separate JVM, on this test's class path. */
final class ChildJvm {

    private ChildJvm() {}

    /**
     * Starts {@code Main} with {@code args}; standard output goes to {@code out} when given,
     * otherwise to a pipe, and standard error to {@code err}.
     */
    static Process start(Path out, Path err, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        // The tests' simplelogger.properties keeps logs quiet; a child shows them as a user would.
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=info");
        command.add("-Dorg.slf4j.simpleLogger.log.dev.idempotent.inbox.examples.publisher.Publisher=warn");
        command.add(Main.class.getName());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(err.toFile());
        if (out != null) {
            builder.redirectOutput(out.toFile());
        }
        return builder.start();
    }
}
