package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.examples.crash.PhaseKill;
import dev.idempotent.inbox.examples.crash.PhaseKill.Report;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Item;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Option;

/**
 * The seed's lab: halts a receiver in a child JVM at each phase of one message, reads the file
 * through an independent connection, restarts the receiver, resends, and prints what it saw.
 */
@Command(name = "crash-lab", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        exitCodeListHeading = ExitCodes.HEADING,
        exitCodeList = {" 0:every phase counted the message exactly once", " 1:a phase failed", ExitCodes.USAGE_LINE,
                ExitCodes.SOFTWARE_LINE},
        description = {"Halts a receiver (a child JVM) right after the inbox insert, right after the stock update"
                + " and right after commit; reads the SQLite file through an independent connection; restarts"
                + " the receiver and resends the message. Exits 0 only if every phase counted it exactly once.",
                "One run halts once per phase; the test suite's PhaseKillTest halts "
                        + CrashLabCommand.SUITE_HALTS_PER_PHASE
                        + " times per phase."})
final class CrashLabCommand implements Callable<Integer> {

    /** How often the test suite's PhaseKillTest halts a receiver at each phase. */
    static final int SUITE_HALTS_PER_PHASE = 20;

    private static final List<Item> BEFORE = List.of(new Item("snack-5", 5), new Item("snack-6", 6));

    @Spec
    CommandSpec spec;

    @Option(names = "--dir", description = "Directory for the SQLite files, kept afterwards (default: a temporary"
            + " directory, deleted afterwards).")
    Path dir;

    @Override
    public Integer call() throws IOException {
        PrintStream out = System.out;
        Path work = dir != null ? CommandError.createDirectory(spec.commandLine(), "--dir", dir)
                : Files.createTempDirectory("inbox-crash-lab");
        out.println("crash-lab: one receiver JVM per phase halts itself with Runtime.halt (no shutdown hooks, no"
                + " rollback, no close);");
        out.println("an independent SQLite connection then reads the file, and a new receiver JVM gets the same"
                + " message again.");
        out.println("Each receiver first commits " + BEFORE.size() + " messages, then receives the next one.");
        int failed = 0;
        try {
            int run = 0;
            for (Phase phase : Phase.values()) {
                Item item = new Item("snack-" + (7 + run), 7 + run);
                Path db = work.resolve("crash-" + phase.name().toLowerCase() + ".db");
                Report report = PhaseKill.run(db, phase, BEFORE, item);
                print(out, report, db);
                failed += report.proven() ? 0 : 1;
                run++;
            }
        } finally {
            if (dir == null) {
                delete(work);
            }
        }
        out.println();
        out.println(failed == 0
                ? "All " + Phase.values().length + " phases: nothing lost, nothing applied twice, in this run."
                : failed + " of " + Phase.values().length + " phases FAILED.");
        // One halt per phase is an example, not a proof: say what backs the claim.
        out.println("This run halted once per phase. PhaseKillTest halts " + SUITE_HALTS_PER_PHASE + " times per phase"
                + " (mvn -pl inbox-examples -am verify -Dtest=PhaseKillTest), and KillUnderLoadTest kills a receiver"
                + " under load.");
        return failed == 0 ? 0 : 1;
    }

    private static void print(PrintStream out, Report report, Path db) {
        String id = report.item().id();
        long qty = report.item().qty();
        out.println();
        out.printf("== %s: %s%n", report.phase(), describe(report.phase()));
        out.printf("   file                  %s%n", db);
        out.printf("   before                total %d, %d inbox rows%n", report.before().total(), report.before().rows());
        out.printf("   receiver pid %-8d got %s / %d and %s%n", report.firstPid(), id, qty,
                report.halt().phase() == null
                        ? "did NOT halt (" + report.halt().lastLine() + ")"
                        : "halted at " + report.halt().phase() + " (exit status " + report.halt().exitStatus() + ")");
        out.printf("   independent connection inbox row for %s: %s, total %d   (expected: %s, total %d)  %s%n",
                id, yesNo(report.afterCrash().has(id)), report.afterCrash().total(),
                yesNo(report.committedBeforeHalt()), report.expectedTotalAfterCrash(),
                report.crashStateCorrect() ? "ok" : "WRONG");
        out.printf("   restarted pid %-7d resend %s / %d -> %s, accepted=%b   (expected: %s)  %s%n",
                report.secondPid(), id, qty, report.resend(), report.resend().kind().accepted(),
                report.expectedResend(), report.resendCorrect() ? "ok" : "WRONG");
        out.printf("   final                 inbox row %s, total %d = %d + %d x %d   %s%n",
                yesNo(report.after().has(id)), report.after().total(), report.before().total(),
                report.timesCounted(), qty, report.finalStateCorrect() ? "ok" : "WRONG");
        out.printf("   verdict               %s%n", report.proven()
                ? "counted exactly once in this run (" + (report.committedBeforeHalt()
                        ? "the commit survived the halt; the resend was a duplicate" : "the halt rolled it back;"
                        + " the resend applied it") + ")"
                : "FAILED: " + String.join("; ", report.problems()));
    }

    private static String describe(Phase phase) {
        return switch (phase) {
            case RECORDED -> "halt right after the inbox insert, transaction open";
            case EFFECT_DONE -> "halt right after the stock update, transaction open";
            case COMMITTED -> "halt right after commit, before the caller (and any ACK) learns of it";
        };
    }

    private static String yesNo(boolean value) {
        return value ? "yes" : "no";
    }

    private static void delete(Path work) throws IOException {
        try (Stream<Path> paths = Files.walk(work)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
