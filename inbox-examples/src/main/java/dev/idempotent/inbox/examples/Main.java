package dev.idempotent.inbox.examples;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The examples' command line: {@code java -jar inbox-examples.jar COMMAND}. */
@Command(
        name = "inbox-examples",
        mixinStandardHelpOptions = true,
        description = "The idempotent inbox, shown on the seed's snack warehouse.",
        subcommands = {DemoCommand.class, ServeCommand.class, PublishCommand.class, CrashLabCommand.class})
public final class Main {

    public static void main(String[] args) {
        System.exit(new CommandLine(new Main()).execute(args));
    }
}
