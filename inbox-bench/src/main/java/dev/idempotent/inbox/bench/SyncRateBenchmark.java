package dev.idempotent.inbox.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The raw sync rate of the disk the database files live on: write 4 KiB, then
 * {@code FileChannel.force(true)}, in a loop. Every durable commit costs at least one such sync, so
 * this is the ceiling for one message per transaction. Run it in the same invocation as the
 * database benchmarks, so both see the same disk and the same load.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class SyncRateBenchmark {

    private static final int PAGE = 4096;
    private static final int PAGES = 256;

    @State(Scope.Benchmark)
    public static class SyncFile {

        @Param({"DISK", "TMPFS"})
        public Location location;

        private Path dir;
        private FileChannel channel;
        private final ByteBuffer page = ByteBuffer.allocateDirect(PAGE);
        private int next;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            open(location.parent());
        }

        void open(Path parent) throws IOException {
            dir = Files.createTempDirectory(parent, "inbox-bench-sync-");
            channel = FileChannel.open(dir.resolve("sync.bin"),
                    StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
            byte[] noise = new byte[PAGE];
            ThreadLocalRandom.current().nextBytes(noise);
            page.put(noise).flip();
            // Preallocate, so each sync overwrites blocks in place as a reused WAL does.
            for (int i = 0; i < PAGES; i++) {
                channel.write(page.duplicate(), (long) i * PAGE);
            }
            channel.force(true);
        }

        long writeAndSync() throws IOException {
            long position = (long) (next++ % PAGES) * PAGE;
            channel.write(page.duplicate(), position);
            channel.force(true);
            return position;
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            channel.close();
            SqliteState.deleteTree(dir);
        }
    }

    @Benchmark
    public long sync(SyncFile file) throws IOException {
        return file.writeAndSync();
    }
}
