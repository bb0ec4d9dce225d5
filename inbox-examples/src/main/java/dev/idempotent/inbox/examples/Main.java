package dev.idempotent.inbox.examples;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParameterException;

/** The examples' command line: {@code java -jar inbox-examples.jar COMMAND}. */
@Command(
        name = "inbox-examples",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "The idempotent inbox, shown on the seed's snack warehouse.",
        subcommands = {DemoCommand.class, ServeCommand.class, ConsumeCommand.class, PublishCommand.class,
                CrashLabCommand.class, SchemaCommand.class},
        exitCodeListHeading = ExitCodes.HEADING,
        exitCodeList = {" 0:done", ExitCodes.USAGE_LINE})
public final class Main {

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /**
     * The command line as {@link #main} runs it: a user's mistake, or a database or port that
     * cannot be used, is one line on standard error and an exit code from {@link ExitCodes}; only
     * a defect prints a stack trace.
     */
    static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new Main());
        // Registered after the subcommands exist, so every command reads durations alike.
        commandLine.registerConverter(Duration.class, new DurationOption());
        commandLine.setParameterExceptionHandler((failure, args) -> {
            CommandLine failed = failure.getCommandLine();
            failed.getErr().println(failed.getCommandName() + ": " + CommandError.oneLine(withoutJavaNames(failure))
                    + " (see " + failed.getCommandSpec().qualifiedName() + " --help)");
            failed.getErr().flush();
            return ExitCodes.USAGE;
        });
        commandLine.setExecutionExceptionHandler((failure, failed, parseResult) -> {
            if (failure instanceof CommandError error) {
                failed.getErr().println(failed.getCommandName() + ": " + CommandError.oneLine(error.getMessage()));
                failed.getErr().flush();
                return error.exitCode();
            }
            failure.printStackTrace(failed.getErr());
            failed.getErr().flush();
            return ExitCodes.SOFTWARE;
        });
        return commandLine;
    }

    /**
     * The message of {@code failure}, but for a value that picocli's own converters could not read
     * (it then names the type and the exception, "cannot convert 'x' to class java.net.URI
     * (java.net.URISyntaxException: ...)"), the option, the value and the option's label.
     */
    static String withoutJavaNames(ParameterException failure) {
        String message = String.valueOf(failure.getMessage());
        Matcher converted = UNCONVERTED.matcher(message);
        if (converted.matches()) {
            String label = failure.getArgSpec() == null ? "value" : failure.getArgSpec().paramLabel();
            return converted.group(1) + ": '" + converted.group(2) + "' is not a valid " + label;
        }
        return message;
    }

    private static final Pattern UNCONVERTED = Pattern.compile("(Invalid value for .*?): cannot convert '(.*)' to .*",
            Pattern.DOTALL);

    /** The version the build wrote into {@code version.properties}. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties properties = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    properties.load(in);
                }
            }
            return new String[] {"inbox-examples " + properties.getProperty("version", "(version unknown)")};
        }
    }
}
