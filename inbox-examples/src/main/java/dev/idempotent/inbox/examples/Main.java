package dev.idempotent.inbox.examples;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

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
        commandLine.setParameterExceptionHandler((failure, args) -> {
            CommandLine failed = failure.getCommandLine();
            failed.getErr().println(failed.getCommandName() + ": " + CommandError.oneLine(failure.getMessage())
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
