package dev.idempotent.inbox.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idempotent.inbox.examples.crash.ChildJvm;
import dev.idempotent.inbox.examples.http.Http;
import dev.idempotent.inbox.examples.publisher.Attempt;
import dev.idempotent.inbox.examples.publisher.DeliveryListener;
import dev.idempotent.inbox.examples.publisher.DeliveryReport;
import dev.idempotent.inbox.examples.publisher.ItemState;
import dev.idempotent.inbox.examples.publisher.Outbox;
import dev.idempotent.inbox.examples.publisher.Publisher;
import dev.idempotent.inbox.examples.publisher.PublisherSettings;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Scale-out on PostgreSQL and on MariaDB: four {@code serve} processes on one database, two publishers that send
 * every item to two different receivers at about the same time, and one receiver killed with
 * SIGKILL in the middle. Every id ends acked through the others, and applied exactly once.
 */
class ScaleOutTest {

    private static final int RECEIVERS = 4;
    private static final int ITEMS = 300;
    private static final int KILLED = 2;
    private static final Pattern URL = Pattern.compile("http://127\\.0\\.0\\.1:\\d+");

    /** The servers the receivers share a database on. */
    enum Server {
        POSTGRESQL("PostgreSQL", () -> PostgresSchema.create("examples_scaleout")),
        MARIADB("MariaDB", () -> MariaDbDatabase.create("examples_scaleout"));

        private final String label;
        private final Supplier<SharedDatabase> create;

        Server(String label, Supplier<SharedDatabase> create) {
            this.label = label;
            this.create = create;
        }
    }

    @TempDir
    Path dir;

    private SharedDatabase database;
    private final List<ChildJvm> receivers = new ArrayList<>();

    @AfterEach
    void stopAll() {
        // The receivers first, so that none holds the database while it is dropped.
        receivers.forEach(ChildJvm::close);
        if (database != null) {
            database.close();
        }
    }

    @ParameterizedTest(name = "on {0}")
    @EnumSource(Server.class)
    void fourReceiversOnOneDatabaseApplyEachIdOnceThoughOneIsKilled(Server server) throws Exception {
        database = server.create.get();
        long started = System.nanoTime();
        List<URI> uris = startReceivers();
        long up = System.nanoTime();
        List<Outbox.Item> items = new ArrayList<>();
        long expectedTotal = 0;
        for (int i = 0; i < ITEMS; i++) {
            int qty = i % 17 + 1;
            items.add(new Outbox.Item("box-" + i, qty));
            expectedTotal += qty;
        }
        // The second publisher's list is the first's turned by one: the item that one sends to
        // receiver i, the other sends to receiver i+1 at about the same time.
        List<URI> turned = new ArrayList<>(uris.subList(1, RECEIVERS));
        turned.add(uris.get(0));

        Map<URI, LongAdder> requestsByReceiver = new ConcurrentHashMap<>();
        uris.forEach(uri -> requestsByReceiver.put(uri, new LongAdder()));
        AtomicInteger attempts = new AtomicInteger();
        CountDownLatch midRun = new CountDownLatch(1);
        DeliveryListener counting = (Attempt attempt) -> {
            requestsByReceiver.get(attempt.receiver()).increment();
            if (attempts.incrementAndGet() == ITEMS / 2) {
                midRun.countDown();
            }
        };

        ExecutorService publishers = Executors.newFixedThreadPool(2);
        try (Outbox first = Outbox.open(dir.resolve("first-outbox.db"));
                Outbox second = Outbox.open(dir.resolve("second-outbox.db"))) {
          try {
            first.enqueueAll(items);
            second.enqueueAll(items);
            Future<DeliveryReport> one = publishers.submit(() -> new Publisher(first, settings(uris, 1), counting).deliverPending());
            Future<DeliveryReport> two = publishers.submit(() -> new Publisher(second, settings(turned, 2), counting).deliverPending());

            assertTrue(midRun.await(60, TimeUnit.SECONDS), "the publishers got going");
            receivers.get(KILLED).kill();
            long pendingAtKill = first.counts().get(ItemState.PENDING) + second.counts().get(ItemState.PENDING);

            DeliveryReport a = one.get(60, TimeUnit.SECONDS);
            DeliveryReport b = two.get(60, TimeUnit.SECONDS);
            long delivered = System.nanoTime();

            Jdbi db = database.jdbi();
            long total = db.withHandle(h -> h.createQuery("SELECT total FROM stock WHERE id = 1").mapTo(Long.class).one());
            Set<String> inInbox = new HashSet<>(db.withHandle(h -> h.createQuery(
                    "SELECT id FROM inbox_message WHERE inbox = 'warehouse'").mapTo(String.class).list()));
            int appliedAcks = (a.acked() - a.duplicatesConfirmed()) + (b.acked() - b.duplicatesConfirmed());

            System.out.printf("scale-out on %s: %d items, %d receivers, 2 publishers (each item to 2 receivers),"
                    + " receiver %d killed with %d items pending%n", server.label, ITEMS, RECEIVERS, KILLED, pendingAtKill);
            for (int i = 0; i < RECEIVERS; i++) {
                System.out.printf("  receiver %d: %d attempts sent to it%s%n", i, requestsByReceiver.get(uris.get(i)).sum(),
                        i == KILLED ? " (killed)" : ", " + appliedEffects(uris.get(i)) + " applied");
            }
            System.out.printf("  publishers: attempts %d, resends %d, acked %d + %d, of those applied by their request %d,"
                            + " duplicates confirmed %d%n", a.attempts() + b.attempts(), a.resends() + b.resends(),
                    a.acked(), b.acked(), appliedAcks, a.duplicatesConfirmed() + b.duplicatesConfirmed());
            System.out.printf("  database: %d inbox rows, total %d (expected %d)%n", inInbox.size(), total, expectedTotal);
            System.out.printf("  receivers up after %d ms, delivery took %d ms%n", (up - started) / 1_000_000,
                    (delivered - up) / 1_000_000);

            assertTrue(pendingAtKill > 0, "killed mid-run");
            assertEquals(ITEMS, a.acked(), a.toString());
            assertEquals(ITEMS, b.acked(), b.toString());
            assertEquals(ITEMS, first.counts().get(ItemState.ACKED));
            assertEquals(ITEMS, second.counts().get(ItemState.ACKED));
            Set<String> ids = new HashSet<>();
            items.forEach(item -> ids.add(item.id()));
            assertEquals(ids, inInbox, "every acked id is in the inbox, and nothing else");
            assertEquals(expectedTotal, total, "each id applied exactly once");
            assertTrue(appliedAcks <= ITEMS, "no id was applied by two requests");
            assertTrue(a.duplicatesConfirmed() + b.duplicatesConfirmed() >= ITEMS, "duplicates across instances were real");
            assertTrue(requestsByReceiver.values().stream().allMatch(count -> count.sum() > 0), "all four took requests");
          } finally {
            // Stopped before the outboxes close, so that no worker writes to a closed one.
            publishers.shutdownNow();
            publishers.awaitTermination(30, TimeUnit.SECONDS);
          }
        }
    }

    /** Starts the receivers together and waits until each one listens. */
    private List<URI> startReceivers() throws Exception {
        for (int i = 0; i < RECEIVERS; i++) {
            receivers.add(ChildJvm.start("serve-" + i, List.of(), Main.class.getName(),
                    List.of("serve", "--db", database.url(), "--port", "0"),
                    dir.resolve("serve-" + i + ".err")));
        }
        List<URI> uris = new ArrayList<>();
        for (ChildJvm receiver : receivers) {
            String line = receiver.nextLine(Duration.ofSeconds(60));
            Matcher url = URL.matcher(line);
            assertTrue(url.find(), "first line names the address: " + line);
            assertTrue(line.contains(database.described()), line);
            uris.add(URI.create(url.group()));
        }
        return uris;
    }

    private static long appliedEffects(URI receiver) {
        // Read from the receiver's own /metrics: what it applied, not what the publishers believe.
        String metrics = new Http(receiver).get("/metrics").body();
        Matcher applied = Pattern.compile("warehouse_applied_effects_total (\\d+)").matcher(metrics);
        return applied.find() ? Long.parseLong(applied.group(1)) : -1;
    }

    private static PublisherSettings settings(List<URI> receivers, long seed) {
        return PublisherSettings.to(receivers)
                .withMaxAttempts(30)
                .withBackoff(Duration.ofMillis(5), Duration.ofMillis(200))
                .withJitterSeed(seed);
    }
}
