package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.InboxStats;
import dev.idempotent.inbox.Outcome;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Applies the seed's four messages to a fresh warehouse and prints the seed's table. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Applies the seed's four messages to a warehouse in a new SQLite file and prints the table.")
final class DemoCommand implements Callable<Integer> {

    @Option(names = "--db", description = "SQLite file to use (default: a new temporary file).")
    Path db;

    @Override
    public Integer call() throws Exception {
        Path file = db != null ? db : Files.createTempDirectory("inbox-demo").resolve("warehouse.db");
        try (Warehouse warehouse = Warehouse.open(file)) {
            new SeedTable(System.out).run(warehouse);
        }
        return 0;
    }

    /** The seed's four calls, one row each. */
    static final class SeedTable {
        private static final String ROW = "%-20s %-10s %-11s %-14s %-15s %5s%n";
        private final PrintStream out;

        SeedTable(PrintStream out) {
            this.out = out;
        }

        void run(Warehouse warehouse) {
            out.printf(ROW, "call", "outcome", "inbox rows", "newly applied", "ACK", "total");
            row(warehouse, "first  snack-7 / 7", "snack-7", 7);
            row(warehouse, "again  snack-7 / 7", "snack-7", 7);
            row(warehouse, "again  snack-7 / 8", "snack-7", 8);
            row(warehouse, "other  snack-8 / 7", "snack-8", 7);
            InboxStats stats = warehouse.stats();
            out.printf("%n%d requests, %d applied effects (%d duplicate, %d conflict)%n",
                    stats.attempts(), stats.applied(), stats.duplicates(), stats.conflicts());
        }

        private void row(Warehouse warehouse, String call, String id, long qty) {
            Outcome<Void> outcome = warehouse.receive(id, qty);
            String kind = outcome.fold(applied -> "Applied", duplicate -> "Duplicate", conflict -> "Conflict");
            String newly = outcome instanceof Outcome.Conflict ? "-" : String.valueOf(outcome.isNewlyApplied());
            String ack = outcome.isAccepted() ? "success" : "no success ACK";
            out.printf(ROW, call, kind, warehouse.receipts(), newly, ack, warehouse.total());
        }
    }
}
