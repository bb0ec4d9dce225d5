package dev.idempotent.inbox.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.IterationResultMetaData;
import org.openjdk.jmh.results.Result;

class ProcessCostProfilerTest {

    private static final long OPS = 4;

    @TempDir
    Path dir;

    @Test
    void chargesTheJvmsCpuAndWritesToEachOperation() throws Exception {
        ProcessCostProfiler profiler = new ProcessCostProfiler();
        profiler.beforeIteration(null, null);
        int written = 1 << 20;
        Files.write(dir.resolve("written"), new byte[written]);
        long burned = burnCpu(50_000_000);

        Map<String, Double> perOp = afterIteration(profiler);

        assertTrue(perOp.get("·written.jvm") >= (double) written / OPS, perOp.toString());
        assertTrue(perOp.get("·cpu.jvm") >= burned / 1e3 / OPS, perOp.toString());
        assertEquals(6, perOp.size(), perOp.toString());
    }

    @Test
    void chargesTheServersCpuWhileItsProcessLives() throws Exception {
        try (Connection connection = connectOrAbort(); Statement statement = connection.createStatement()) {
            ProcessCostProfiler profiler = new ProcessCostProfiler();
            profiler.beforeIteration(null, null);
            long started = System.nanoTime();
            statement.execute("SELECT count(*) FROM generate_series(1, 3000000)");
            long elapsedNanos = System.nanoTime() - started;

            Map<String, Double> perOp = afterIteration(profiler);

            // The backend computed for most of the statement's wall time; the JVM only waited.
            double serverMicros = perOp.get("·cpu.postgres") * OPS;
            assertTrue(serverMicros >= elapsedNanos / 1e3 / 2, perOp + " over " + elapsedNanos + " ns");
        }
    }

    private static Map<String, Double> afterIteration(ProcessCostProfiler profiler) {
        IterationResult iteration = new IterationResult(null, null, new IterationResultMetaData(OPS, OPS));
        Map<String, Double> perOp = new HashMap<>();
        for (Result<?> result : profiler.afterIteration(null, null, iteration)) {
            perOp.put(result.getLabel(), result.getScore());
        }
        return perOp;
    }

    /** Spins until this thread has used {@code nanos} of CPU; returns what it used. */
    private static long burnCpu(long nanos) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long start = threads.getCurrentThreadCpuTime();
        long x = 1;
        while (threads.getCurrentThreadCpuTime() - start < nanos) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        if (x == 42) {
            System.out.println(x); // keeps the loop from being removed
        }
        return threads.getCurrentThreadCpuTime() - start;
    }

    private static Connection connectOrAbort() {
        try {
            return DriverManager.getConnection(PostgresState.URL, PostgresState.USER, null);
        } catch (SQLException unreachable) {
            Assumptions.abort("no PostgreSQL server at " + PostgresState.URL + ": " + unreachable);
            throw new AssertionError(unreachable);
        }
    }
}
