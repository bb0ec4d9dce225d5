package dev.idempotent.inbox.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * Charges every operation with the CPU time, and the bytes read and written through system calls,
 * of this JVM and of the PostgreSQL server's processes on this machine, read from Linux's
 * {@code /proc} before and after each iteration. Run with {@code -prof
 * dev.idempotent.inbox.bench.ProcessCostProfiler}.
 *
 * <p>A throughput says how long a call took, not where the time went. With these figures a gap
 * between two benchmarks splits into CPU on the client, CPU in the server, and the rest: waiting on
 * syncs, locks and the network. Everything in the process counts, so the SQLite checkpoint thread
 * and the HTTP threads are charged to the calls that made them work, and so are the JIT compiler's
 * threads while the benchmark's code is still being compiled. Server processes are every
 * process named {@code postgres}, its background writers included; one that exits during an
 * iteration loses its last share. Bytes are {@code rchar} and {@code wchar}: what the system calls
 * moved, whether or not it reached the disk.
 */
public final class ProcessCostProfiler implements InternalProfiler {

    private static final Path PROC = Path.of("/proc");

    private Usage before;

    @Override
    public String getDescription() {
        return "CPU time and bytes read/written per operation, this JVM and the local PostgreSQL server (Linux /proc)";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        before = Usage.now();
    }

    @Override
    public List<? extends Result> afterIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams,
                                                 IterationResult result) {
        Usage after = Usage.now();
        long ops = result.getMetadata().getMeasuredOps();
        if (ops == 0) {
            return List.of();
        }
        Counters jvm = after.jvm.minus(before.jvm);
        Counters server = Counters.ZERO;
        for (Map.Entry<Long, Counters> process : after.postgres.entrySet()) {
            server = server.plus(process.getValue().minus(before.postgres.getOrDefault(process.getKey(), Counters.ZERO)));
        }
        return List.of(
                perOp("cpu.jvm", jvm.cpuNanos / 1e3, ops, "us/op"),
                perOp("read.jvm", jvm.readBytes, ops, "B/op"),
                perOp("written.jvm", jvm.writtenBytes, ops, "B/op"),
                perOp("cpu.postgres", server.cpuNanos / 1e3, ops, "us/op"),
                perOp("read.postgres", server.readBytes, ops, "B/op"),
                perOp("written.postgres", server.writtenBytes, ops, "B/op"));
    }

    /**
     * The CPU time of the PostgreSQL server process {@code pid} on this machine, in nanoseconds, or
     * zero if there is no such process here.
     */
    static long serverProcessCpuNanos(long pid) {
        try {
            return cpuNanos(PROC.resolve(Long.toString(pid)));
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the CPU time of process " + pid, e);
        }
    }

    /**
     * How many times the calling thread has blocked so far (Linux's voluntary context switches),
     * or zero where /proc does not tell: on loopback, one for each answer it waited for.
     */
    static long callingThreadSleeps() {
        try {
            for (String line : Files.readAllLines(PROC.resolve("thread-self/status"))) {
                if (line.startsWith("voluntary_ctxt_switches:")) {
                    return Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                }
            }
            return 0;
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the calling thread's context switches", e);
        }
    }

    // The first field of schedstat is the time spent on a CPU, in nanoseconds; PostgreSQL runs one
    // thread per process, so it is the process's CPU time.
    private static long cpuNanos(Path process) throws IOException {
        String schedstat = Files.readString(process.resolve("schedstat"));
        return Long.parseLong(schedstat.substring(0, schedstat.indexOf(' ')));
    }

    private static ScalarResult perOp(String label, double total, long ops, String unit) {
        return new ScalarResult("·" + label, total / ops, unit, AggregationPolicy.AVG);
    }

    /** CPU nanoseconds and bytes moved by read and write system calls. */
    private record Counters(long cpuNanos, long readBytes, long writtenBytes) {
        static final Counters ZERO = new Counters(0, 0, 0);

        Counters minus(Counters earlier) {
            return new Counters(cpuNanos - earlier.cpuNanos, readBytes - earlier.readBytes,
                    writtenBytes - earlier.writtenBytes);
        }

        Counters plus(Counters other) {
            return new Counters(cpuNanos + other.cpuNanos, readBytes + other.readBytes,
                    writtenBytes + other.writtenBytes);
        }
    }

    /** This JVM's counters and those of each PostgreSQL process, by process id. */
    private record Usage(Counters jvm, Map<Long, Counters> postgres) {

        static Usage now() {
            var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            Path self = PROC.resolve(Long.toString(ProcessHandle.current().pid()));
            Counters jvmIo = io(self, os.getProcessCpuTime());
            Map<Long, Counters> postgres = new HashMap<>();
            try (Stream<Path> processes = Files.list(PROC)) {
                for (Path process : processes.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
                    Counters counters = postgresProcess(process);
                    if (counters != null) {
                        postgres.put(Long.parseLong(process.getFileName().toString()), counters);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list " + PROC + "; this profiler needs Linux", e);
            }
            return new Usage(jvmIo == null ? Counters.ZERO : jvmIo, postgres);
        }

        /** A PostgreSQL process's counters, or null if {@code process} is another program or has ended. */
        private static Counters postgresProcess(Path process) {
            try {
                if (!"postgres".equals(Files.readString(process.resolve("comm")).strip())) {
                    return null;
                }
                return io(process, cpuNanos(process));
            } catch (NoSuchFileException e) {
                return null;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + process, e);
            }
        }

        private static Counters io(Path process, long cpuNanos) {
            long read = 0;
            long written = 0;
            try {
                for (String line : Files.readAllLines(process.resolve("io"))) {
                    if (line.startsWith("rchar:")) {
                        read = Long.parseLong(line.substring(6).strip());
                    } else if (line.startsWith("wchar:")) {
                        written = Long.parseLong(line.substring(6).strip());
                    }
                }
            } catch (NoSuchFileException e) {
                return null;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + process.resolve("io"), e);
            }
            return new Counters(cpuNanos, read, written);
        }
    }
}
