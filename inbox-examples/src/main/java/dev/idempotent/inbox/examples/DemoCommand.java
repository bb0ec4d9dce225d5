package dev.idempotent.inbox.examples;

import dev.idempotent.inbox.examples.http.AckFault;
import dev.idempotent.inbox.examples.http.ReceiverMetrics;
import dev.idempotent.inbox.examples.http.ReceiverSettings;
import dev.idempotent.inbox.examples.http.RequestOutcome;
import dev.idempotent.inbox.examples.http.WarehouseServer;
import dev.idempotent.inbox.examples.publisher.Attempt;
import dev.idempotent.inbox.examples.publisher.DeliveryListener;
import dev.idempotent.inbox.examples.publisher.Enqueued;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.Outbox;
import dev.idempotent.inbox.examples.publisher.Publisher;
import dev.idempotent.inbox.examples.publisher.PublisherSettings;
import dev.idempotent.inbox.examples.publisher.Verdict;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The seed's table, end to end over real HTTP: a warehouse receiver on a loopback port that loses
 * its first ACK, and a publisher that trusts nothing but a verified ACK.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Runs the seed's four shipments through a publisher and a warehouse over HTTP on 127.0.0.1,"
                + " with one lost ACK, and explains each step.",
        exitCodeListHeading = ExitCodes.HEADING,
        exitCodeList = {" 0:the story was told", ExitCodes.USAGE_LINE, ExitCodes.SOFTWARE_LINE})
final class DemoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--dir", paramLabel = "DIR", description = "Where to keep the two SQLite files (default: a new temporary directory).")
    Path dir;

    @Override
    public Integer call() throws Exception {
        // Before the first logger exists: the demo's own output tells the story, request logs would clutter it.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        Path files = dir != null ? CommandError.createDirectory(spec.commandLine(), "--dir", dir)
                : Files.createTempDirectory("inbox-demo");
        try (Warehouse warehouse = Warehouse.open(files.resolve("warehouse.db"));
                WarehouseServer server = WarehouseServer.start(warehouse,
                        ReceiverSettings.loopback().withAckFault(AckFault.first(1)))) {
            new Story(System.out, warehouse, server, files, dir == null).run();
        } finally {
            if (dir == null) {
                // After the close above: SQLite's files are released, so they can go on any system.
                try {
                    deleteTree(files);
                } catch (IOException e) {
                    System.err.println("demo: the temporary directory " + files + " could not be deleted: "
                            + CommandError.oneLine(e.getMessage()));
                }
            }
        }
        return 0;
    }

    /** Deletes {@code root} and everything in it; a file that cannot be deleted is left, with the rest. */
    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    /** The steps and their narration. */
    static final class Story {
        private final PrintStream out;
        private final Warehouse warehouse;
        private final WarehouseServer server;
        private final Path files;
        private final Narrator narrator;

        private final boolean temporary;

        Story(PrintStream out, Warehouse warehouse, WarehouseServer server, Path files, boolean temporary) {
            this.temporary = temporary;
            this.out = out;
            this.warehouse = warehouse;
            this.server = server;
            this.files = files;
            this.narrator = new Narrator(out, warehouse, server.metrics());
        }

        void run() throws InterruptedException {
            out.println("The idempotent inbox, end to end over HTTP");
            out.println("  warehouse  " + server.uri() + "  stock and inbox in one SQLite file;"
                    + " it will lose its first ACK on purpose");
            out.println("  publisher  an outbox in its own SQLite file; an item is done only after a verified ACK");
            out.println("  files      " + files + (temporary ? "  (deleted at the end; --dir DIR keeps them)" : ""));

            try (Outbox outbox = Outbox.open(files.resolve("publisher-outbox.db"));
                    Outbox careless = Outbox.open(files.resolve("second-sender-outbox.db"))) {
                tell(outbox, careless);
            }
        }

        private void tell(Outbox outbox, Outbox careless) throws InterruptedException {
            Publisher publisher = publisher(outbox);

            narrator.title("first  snack-7 / 7");
            outbox.enqueue("snack-7", 7);
            publisher.deliverPending();

            narrator.title("again  snack-7 / 8");
            Enqueued refused = outbox.enqueue("snack-7", 8);
            out.println("   outbox     " + (refused == Enqueued.REFUSED_OTHER_QTY
                    ? "refuses it before sending: snack-7 is already enqueued with qty 7"
                    : "unexpectedly took it: " + refused));
            out.println("              a second sender, with an outbox of its own, sends it anyway:");
            careless.enqueue("snack-7", 8);
            publisher(careless).deliverPending();

            narrator.title("other  snack-8 / 7");
            outbox.enqueue("snack-8", 7);
            publisher.deliverPending();

            summary(outbox);
        }

        private Publisher publisher(Outbox outbox) {
            PublisherSettings settings = PublisherSettings.to(server.uri())
                    .withWindow(1)
                    .withBackoff(Duration.ofMillis(200), Duration.ofSeconds(1))
                    .withJitterSeed(7);
            return new Publisher(outbox, settings, narrator);
        }

        private void summary(Outbox outbox) {
            ReceiverMetrics metrics = server.metrics();
            StockLevel stock = warehouse.stock();
            out.println();
            out.println("The seed's table, as it happened:");
            narrator.printTable();
            out.println();
            out.printf("%d requests reached the warehouse; %d applied an effect.%n",
                    metrics.requests(), metrics.appliedEffects());
            out.printf("  applied %d, duplicate %d, conflict %d; ACKs lost after their commit: %d%n",
                    metrics.requests(RequestOutcome.APPLIED), metrics.requests(RequestOutcome.DUPLICATE),
                    metrics.requests(RequestOutcome.CONFLICT), metrics.acksDropped());
            out.printf("  stock total %d from %d receipts; the publisher's outbox: %d acked, %d pending%n",
                    stock.total(), stock.receipts(), outbox.counts().get(ItemState.ACKED),
                    outbox.counts().get(ItemState.PENDING));
            out.println();
            out.println("Why it works:");
            out.println("  - The warehouse commits the inbox row and the stock change in one transaction, so a");
            out.println("    resent snack-7 is recognised: nothing is added, and the answer is still accepted:true.");
            out.println("  - A duplicate is not a failure. Had it been refused, the publisher would resend forever.");
            out.println("  - The same id with another qty is a conflict: refused with 409, the first shipment kept.");
            out.println("  - The publisher marks an item done only after a 200 whose JSON names the same id and");
            out.println("    says \"accepted\": true. No response, a 5xx or any other 200 means: unknown, send again.");
        }
    }

    /** Prints one block per delivery attempt, with the warehouse's state right after it. */
    static final class Narrator implements DeliveryListener {
        private static final String ROW = "  %-20s %-12s %-10s %-11s %-6s %s%n";

        private final PrintStream out;
        private final Warehouse warehouse;
        private final ReceiverMetrics metrics;
        private int step;
        private long appliedBefore;
        private long droppedBefore;

        Narrator(PrintStream out, Warehouse warehouse, ReceiverMetrics metrics) {
            this.out = out;
            this.warehouse = warehouse;
            this.metrics = metrics;
        }

        private final List<String> table = new ArrayList<>();
        private String call;

        void title(String call) {
            this.call = call;
            out.printf("%n%d. %s%n", ++step, call);
        }

        /** The seed's table as it happened, one row per request. */
        void printTable() {
            out.printf(ROW, "call", "HTTP", "publisher", "inbox rows", "total", "newly applied");
            table.forEach(out::print);
        }

        @Override
        public synchronized void onAttempt(Attempt attempt) {
            if (attempt.number() > 1) {
                call = "again  " + attempt.id() + " / " + attempt.qty();
                out.printf("%n%d. %s   (the publisher's resend)%n", ++step, call);
            }
            long applied = metrics.appliedEffects();
            long dropped = metrics.acksDropped();
            StockLevel stock = warehouse.stock();
            out.printf("   request    POST /receipts {\"id\":\"%s\",\"qty\":%d}%n", attempt.id(), attempt.qty());
            if (attempt.status().isPresent()) {
                out.printf("   HTTP       %d %s%n", attempt.status().getAsInt(), attempt.response());
            } else if (dropped > droppedBefore) {
                out.println("   HTTP       no response: the warehouse committed, then the connection closed (the lost ACK)");
            } else {
                out.println("   HTTP       no response");
            }
            out.printf("   publisher  %s%n", verdict(attempt));
            String newly = attempt.verdict() instanceof Verdict.Rejected ? "-" : applied > appliedBefore ? "yes" : "no";
            out.printf("   warehouse  inbox rows %d, total %d, newly applied: %s%n", stock.receipts(), stock.total(), newly);
            String http = attempt.status().isPresent() ? String.valueOf(attempt.status().getAsInt()) : "no response";
            String kind = attempt.verdict().getClass().getSimpleName().toUpperCase(Locale.ROOT);
            table.add(String.format(ROW, call, http, kind, stock.receipts(), stock.total(), newly));
            appliedBefore = applied;
            droppedBefore = dropped;
        }

        private static String verdict(Attempt attempt) {
            Verdict verdict = attempt.verdict();
            if (verdict instanceof Verdict.Acked) {
                return verdict.describe() + " -> writes the completion mark";
            }
            if (verdict instanceof Verdict.Rejected rejected) {
                return "REJECTED (HTTP " + rejected.status() + ") -> parked with its reason, never sent again";
            }
            return verdict.describe() + " -> keeps it pending and sends it again";
        }
    }
}
