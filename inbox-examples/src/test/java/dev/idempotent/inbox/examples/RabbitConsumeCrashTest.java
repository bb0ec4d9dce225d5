package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idempotent.inbox.examples.crash.ChildJvm;
import dev.idempotent.inbox.examples.crash.StockView;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kill -9} of {@code consume --broker rabbitmq}: a real consumer process on a SQLite file is
 * killed with {@code destroyForcibly} twice in the middle of a stream of 2,000 receipts on the
 * real broker, a fifth of them duplicates and some conflicts, and started again each time.
 *
 * <p>At the end the total is the sum of qty over the distinct ids, each applied once; the queue
 * holds nothing, ready or unacked, so every committed receipt was acked; the dead-letter queue
 * holds exactly the conflicting receipts. Once per batch size, 1, 20 and 100; the seed is printed
 * and {@code -Dinbox.rabbitCrash.seed=N} repeats a run.
 */
class RabbitConsumeCrashTest {

    private static final int RECEIPTS = 2000;
    private static final int DUPLICATES = 400;
    private static final int CONFLICTS = 40;
    private static final int ORIGINALS = RECEIPTS - DUPLICATES - CONFLICTS;
    /**
     * A conflict comes this many originals after the receipt it conflicts with, more than the
     * prefetch: its original is committed (or requeued ahead of it) before it is delivered, so it
     * is the conflict, not the original, that is refused.
     */
    private static final int CONFLICT_DISTANCE = 300;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private record Send(String id, int qty, double key) {}

    @ParameterizedTest(name = "batch {0}")
    @ValueSource(ints = {1, 20, 100})
    void consumerKilledMidStreamLosesNothingAppliesNothingTwiceAndDeadLettersTheConflicts(int batch) throws Exception {
        long seed = Long.getLong("inbox.rabbitCrash.seed", System.nanoTime());
        Random random = new Random(seed);
        String run = Long.toHexString(seed);
        List<Send> stream = new ArrayList<>();
        Map<String, Integer> qtyOf = new HashMap<>();
        for (int i = 0; i < ORIGINALS; i++) {
            String id = "r" + run + "-" + i;
            int qty = 1 + random.nextInt(100);
            qtyOf.put(id, qty);
            stream.add(new Send(id, qty, i));
        }
        for (int d = 0; d < DUPLICATES; d++) {
            int of = random.nextInt(ORIGINALS);
            stream.add(new Send("r" + run + "-" + of, qtyOf.get("r" + run + "-" + of),
                    of + 0.5 + random.nextDouble() * (ORIGINALS - of)));
        }
        Map<String, Integer> conflicts = new HashMap<>();
        while (conflicts.size() < CONFLICTS) {
            int of = random.nextInt(ORIGINALS - CONFLICT_DISTANCE - 1);
            String id = "r" + run + "-" + of;
            if (conflicts.containsKey(id)) {
                continue;
            }
            int qty = qtyOf.get(id) + 1000;
            conflicts.put(id, qty);
            stream.add(new Send(id, qty, of + CONFLICT_DISTANCE + 0.5
                    + random.nextDouble() * (ORIGINALS - of - CONFLICT_DISTANCE)));
        }
        stream.sort(Comparator.comparingDouble(Send::key));
        long expectedTotal = qtyOf.values().stream().mapToLong(Integer::longValue).sum();
        System.out.printf("[rabbit-crash] batch %d, seed %d: %d receipts, %d distinct, %d conflicts%n",
                batch, seed, stream.size(), ORIGINALS, CONFLICTS);

        Path db = dir.resolve("stock.db");
        try (RabbitQueue queue = new RabbitQueue()) {
            for (Send send : stream) {
                queue.publish(send.id(), send.qty());
            }
            int[] killAt = {ORIGINALS / 3, 2 * ORIGINALS / 3};
            for (int kill : killAt) {
                try (ChildJvm consumer = start(queue, db, batch)) {
                    await("receipts committed reach " + kill, () -> rows(db) >= kill);
                    consumer.kill();
                }
                System.out.printf("[rabbit-crash] batch %d: killed at %d committed receipts%n", batch, rows(db));
            }
            try (ChildJvm consumer = start(queue, db, batch)) {
                await("every distinct receipt is committed", () -> rows(db) == ORIGINALS);
                await("the conflicts are dead-lettered", () -> deadLetters(queue) == CONFLICTS);
                await("the queue is empty, ready and unacked", () -> readyAndUnacked(queue) == 0);
                consumer.terminate();
                List<String> rest = consumer.restOfOutput(TIMEOUT);
                // 128 + SIGTERM: the JVM reports the signal that stopped it, after its shutdown hooks ran.
                assertEquals(143, consumer.awaitExit(TIMEOUT));
                assertTrue(rest.contains("{\"total\":" + expectedTotal + ",\"receipts\":" + ORIGINALS + "}"),
                        "the stock printed on exit: " + rest);
            }
            StockView.Snapshot stock = StockView.read(db, SqliteWarehouse.INBOX);
            assertEquals(expectedTotal, stock.total(), "each distinct id's qty counted once");
            assertEquals(qtyOf.keySet(), stock.ids());
            assertEquals(0, queue.ready(), "nothing came back when the consumer stopped: all was acked");
            Set<String> deadLetters = new HashSet<>(queue.takeDeadLetters());
            Set<String> expectedDead = conflicts.entrySet().stream()
                    .map(e -> "{\"id\":\"" + e.getKey() + "\",\"qty\":" + e.getValue() + "}")
                    .collect(Collectors.toSet());
            assertEquals(expectedDead, deadLetters, "the dead letters are the conflicting receipts, each once");
        }
    }

    private static ChildJvm start(RabbitQueue queue, Path db, int batch) {
        ChildJvm child = ChildJvm.start("consume", ChildJvm.FAST_START, Main.class.getName(),
                List.of("consume", "--broker", "rabbitmq", "--uri", RabbitQueue.URI, "--queue", queue.name,
                        "--db", db.toString(), "--batch", String.valueOf(batch), "--prefetch", "100"));
        child.awaitLine(line -> line.startsWith("consuming receipts from RabbitMQ"), TIMEOUT);
        return child;
    }

    private static int rows(Path db) {
        return StockView.read(db, SqliteWarehouse.INBOX).rows();
    }

    private static long deadLetters(RabbitQueue queue) {
        try {
            return queue.deadLetters();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static long readyAndUnacked(RabbitQueue queue) {
        try {
            return queue.readyAndUnacked();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting until " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
        }
    }
}
