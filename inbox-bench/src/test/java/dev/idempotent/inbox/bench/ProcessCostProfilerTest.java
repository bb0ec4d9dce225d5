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
import java.sql.ResultSet;
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
    // /proc counts CPU time in clock ticks of 10 ms on Linux; two readings may each be off by one.
    private static final long CLOCK_TICK_NANOS = 20_000_000;

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
            long backend;
            try (ResultSet pid = statement.executeQuery("SELECT pg_backend_pid()")) {
                pid.next();
                backend = pid.getLong(1);
            }
            long backendBefore = ProcessCostProfiler.serverProcessCpuNanos(backend);
            ProcessCostProfiler profiler = new ProcessCostProfiler();
            profiler.beforeIteration(null, null);
            statement.execute("SELECT count(*) FROM generate_series(1, 3000000)");

            Map<String, Double> perOp = afterIteration(profiler);
            long backendUsed = ProcessCostProfiler.serverProcessCpuNanos(backend) - backendBefore;

            // The profiler charges every server process, this session's backend among them: at
            // least what /proc says the backend used, whatever else the machine was doing.
            double serverNanos = perOp.get("·cpu.postgres") * OPS * 1e3;
            assertTrue(backendUsed > 0, "the statement cost the backend CPU: " + backendUsed);
            assertTrue(serverNanos >= backendUsed - CLOCK_TICK_NANOS,
                    perOp + ", the backend alone used " + backendUsed + " ns");
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
