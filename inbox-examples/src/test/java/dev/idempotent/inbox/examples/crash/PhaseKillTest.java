package dev.idempotent.inbox.examples.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.Phase;
import dev.idempotent.inbox.examples.crash.PhaseKill.Report;
import dev.idempotent.inbox.examples.crash.PhaseKill.Round;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Item;
import dev.idempotent.inbox.examples.crash.StockView.Snapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The seed's lab, repeated: a receiver JVM halts at one phase of a message, an independent
 * connection checks the file, a new receiver JVM gets the message again, and the message must end
 * counted exactly once; then that receiver goes on and is halted in the next round.
 */
class PhaseKillTest {

    /** Halts per phase. */
    static final int RUNS = 20;

    /**
     * Series run side by side, each on its own file, sharing the runs: starting a JVM is mostly
     * CPU, so two keep two processors busy.
     */
    static final int SERIES = 2;

    /** Messages each receiver commits before the one it halts in. */
    static final int COMMITTED_BEFORE = 2;

    @ParameterizedTest(name = "halt at {0}")
    @EnumSource(Phase.class)
    void haltAtPhaseLosesNothingAndCountsNothingTwice(Phase phase, @TempDir Path dir) throws Exception {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        List<List<Round>> series = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        for (int s = 0; s < SERIES; s++) {
            series.add(new ArrayList<>());
            files.add(Files.createDirectories(dir.resolve("series-" + s)).resolve("receiver.db"));
        }
        for (int run = 1; run <= RUNS; run++) {
            String prefix = phase.name().toLowerCase() + "-" + run;
            List<Item> before = new ArrayList<>();
            for (int b = 1; b <= COMMITTED_BEFORE; b++) {
                before.add(new Item(prefix + "-before-" + b, 1 + random.nextInt(99)));
            }
            series.get(run % SERIES).add(new Round(before, new Item(prefix, 1 + random.nextInt(99))));
        }

        List<Callable<List<Report>>> work = new ArrayList<>();
        for (int s = 0; s < SERIES; s++) {
            Path db = files.get(s);
            List<Round> rounds = series.get(s);
            work.add(() -> PhaseKill.series(db, phase, rounds));
        }
        List<Report> reports = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(SERIES);
        try {
            for (Future<List<Report>> done : pool.invokeAll(work)) {
                reports.addAll(done.get());
            }
        } finally {
            pool.shutdownNow();
        }

        // Across each whole file: every message of every round, counted once.
        long expectedTotal = 0;
        long finalTotal = 0;
        long items = 0;
        long rows = 0;
        for (int s = 0; s < SERIES; s++) {
            Snapshot end = StockView.read(files.get(s));
            finalTotal += end.total();
            rows += end.rows();
            for (Round round : series.get(s)) {
                items += round.committedBefore().size() + 1;
                expectedTotal += round.crashed().qty()
                        + round.committedBefore().stream().mapToLong(Item::qty).sum();
            }
        }

        reports.forEach(report -> System.out.println("[phase-kill] " + report.summary()));
        long halted = reports.stream().filter(Report::haltedAtPhase).count();
        long lost = reports.stream().filter(report -> report.timesCounted() == 0).count();
        long twice = reports.stream().filter(report -> report.timesCounted() > 1).count();
        String resends = reports.stream().collect(Collectors.groupingBy(
                report -> report.resend().toString(), Collectors.counting())).toString();
        System.out.printf("[phase-kill] %s: %d runs in %d series side by side, %d receiver JVMs, %d halted at %s;"
                        + " %d items (%d committed before a halt, %d in flight at it); %d resends %s;"
                        + " lost %d, counted twice %d; final totals %d (expected %d), inbox rows %d (expected %d);"
                        + " seed %d%n",
                phase, reports.size(), SERIES, reports.size() + SERIES, halted, phase, items,
                items - reports.size(), reports.size(), reports.size(), resends, lost, twice, finalTotal,
                expectedTotal, rows, items, seed);

        assertEquals(RUNS, reports.size());
        List<String> failures = reports.stream().filter(report -> !report.proven()).map(Report::summary).toList();
        assertTrue(failures.isEmpty(), () -> failures.size() + " of " + RUNS + " runs failed (seed " + seed + "):\n"
                + String.join("\n", failures));
        assertEquals(0, lost, "lost items");
        assertEquals(0, twice, "items counted twice");
        assertEquals(expectedTotal, finalTotal, "final totals: every item exactly once");
        assertEquals(items, rows, "one inbox row per item");
    }
}
