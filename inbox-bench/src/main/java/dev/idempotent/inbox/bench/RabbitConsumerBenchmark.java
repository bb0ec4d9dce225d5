package dev.idempotent.inbox.bench;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.idempotent.inbox.Content;
import dev.idempotent.inbox.rabbitmq.ContentDecoder;
import dev.idempotent.inbox.rabbitmq.Decoded;
import dev.idempotent.inbox.rabbitmq.RabbitInboxConsumer;
import dev.idempotent.inbox.sqlite.SqliteInbox;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * Messages per second through {@link RabbitInboxConsumer} against a plain consumer that writes the
 * same stock row without an inbox, with automatic acks, in the same run, at batch 1 and batch 100.
 *
 * <p>Each trial gets a fresh queue with N messages already published (each with its own id as
 * the message id, its quantity as 8 bytes), a fresh SQLite file (WAL, {@code synchronous=FULL}, as
 * the inbox opens it; both sides open it through {@link SqliteInbox#jdbi}), and times from the
 * start of consuming until all N are committed. The plain side, per delivery (batch 1) or per 100
 * deliveries, runs one transaction with {@code UPDATE stock}; the inbox side runs the same update
 * as its effect, through {@code apply} (batch 1) or {@code applyAll} of 100 and one multiple-ack,
 * and is timed until the last ack is sent. Publishing is not timed.
 *
 * <p>Rounds alternate which side goes first; the first round is a warm-up and not reported. Each
 * round's ratio (inbox / plain) is printed, then the median and the range.
 *
 * <pre>
 * java -cp inbox-bench/target/benchmarks.jar dev.idempotent.inbox.bench.RabbitConsumerBenchmark [ROUNDS [N1 [N100]]]
 * </pre>
 *
 * <p>Defaults: 21 rounds, N = 1,000 messages per trial at batch 1 and 10,000 at batch 100; short
 * trials and many rounds, because on a shared machine the load changes from second to second and
 * the median of many paired ratios is steadier than a few long trials. The files go to the JVM's
 * temp directory: {@code -Djava.io.tmpdir=/dev/shm} puts them on tmpfs, where the commit costs no
 * disk sync and the comparison is of CPU alone.
 *
 * <p>{@code -Dinbox.bench.rabbit.uri} names the broker (default
 * {@code amqp://guest:guest@127.0.0.1:5672}); every queue it makes is deleted at the end of its trial.
 */
public final class RabbitConsumerBenchmark {

    private static final String URI = System.getProperty("inbox.bench.rabbit.uri", "amqp://guest:guest@127.0.0.1:5672");
    private static final int[] BATCHES = {1, 100};
    private static final long QUANTITY = 7;

    private RabbitConsumerBenchmark() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 21;
        int messagesAtBatch1 = args.length > 1 ? Integer.parseInt(args[1]) : 1_000;
        int messagesAtBatch100 = args.length > 2 ? Integer.parseInt(args[2]) : 10_000;
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(URI);
        Path dir = Files.createTempDirectory("inbox-bench-rabbit-");
        System.out.printf(Locale.ROOT, "RabbitConsumerBenchmark: %d rounds (first one warm-up), files in %s%n", rounds, dir);
        try (Connection connection = factory.newConnection("inbox-bench")) {
            for (int batch : BATCHES) {
                int messages = batch == 1 ? messagesAtBatch1 : messagesAtBatch100;
                List<Double> ratios = new ArrayList<>();
                List<Double> inboxRates = new ArrayList<>();
                List<Double> plainRates = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                    boolean inboxFirst = round % 2 == 0;
                    double first = trial(connection, dir, batch, messages, inboxFirst);
                    double second = trial(connection, dir, batch, messages, !inboxFirst);
                    double inbox = inboxFirst ? first : second;
                    double plain = inboxFirst ? second : first;
                    String label = round == 0 ? "warm-up" : "round " + round;
                    System.out.printf(Locale.ROOT, "batch %3d %-8s inbox %8.0f msg/s  plain %8.0f msg/s  ratio %.3f%n",
                            batch, label, inbox, plain, inbox / plain);
                    if (round > 0) {
                        ratios.add(inbox / plain);
                        inboxRates.add(inbox);
                        plainRates.add(plain);
                    }
                }
                System.out.printf(Locale.ROOT,
                        "batch %3d: %d messages per trial; inbox median %.0f msg/s, plain median %.0f msg/s;"
                                + " ratio median %.3f (range %.3f to %.3f over %d rounds)%n",
                        batch, messages, median(inboxRates), median(plainRates), median(ratios),
                        ratios.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN),
                        ratios.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN), ratios.size());
            }
        }
    }

    /** One side's trial on a fresh queue and file; returns messages per second. */
    private static double trial(Connection connection, Path dir, int batch, int messages, boolean inbox) throws Exception {
        String queue = "inbox-bench-" + UUID.randomUUID();
        Path file = dir.resolve(queue + ".db");
        try (Channel admin = connection.createChannel()) {
            admin.queueDeclare(queue, false, false, false, null);
            try {
                publish(admin, queue, messages);
                Jdbi jdbi = SqliteInbox.jdbi(file);
                jdbi.useHandle(h -> {
                    h.execute("CREATE TABLE stock (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)");
                    h.execute("INSERT INTO stock (id, total) VALUES (1, 0)");
                });
                double rate = inbox ? inboxTrial(connection, jdbi, queue, batch, messages)
                        : plainTrial(connection, jdbi, queue, batch, messages);
                long total = jdbi.withHandle(h -> h.createQuery("SELECT total FROM stock").mapTo(Long.class).one());
                if (total != messages * QUANTITY) {
                    throw new IllegalStateException("the stock holds " + total + ", not " + messages * QUANTITY);
                }
                return rate;
            } finally {
                admin.queueDelete(queue);
                for (String suffix : new String[] {"", "-wal", "-shm"}) {
                    Files.deleteIfExists(Path.of(file + suffix));
                }
            }
        }
    }

    private static void publish(Channel channel, String queue, int messages) throws Exception {
        channel.confirmSelect();
        for (int i = 0; i < messages; i++) {
            channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId("m-" + i).build(),
                    ByteBuffer.allocate(Long.BYTES).putLong(QUANTITY).array());
        }
        channel.waitForConfirmsOrDie(TimeUnit.MINUTES.toMillis(2));
    }

    private static final ContentDecoder<Long> QUANTITY_DECODER = delivery -> {
        long qty = ByteBuffer.wrap(delivery.getBody()).getLong();
        return Decoded.of(Content.of(qty), qty);
    };

    private static double inboxTrial(Connection connection, Jdbi jdbi, String queue, int batch, int messages)
            throws Exception {
        try (SqliteInbox inbox = SqliteInbox.builder(jdbi).name("bench").build()) {
            long started = System.nanoTime();
            RabbitInboxConsumer consumer = RabbitInboxConsumer
                    .builder(inbox, queue, QUANTITY_DECODER,
                            (Handle tx, String id, Long qty) -> tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty))
                    .batchSize(batch).prefetch(Math.max(100, 2 * batch))
                    .start(connection);
            try {
                return rateWhen(started, messages, () -> consumer.stats().acked());
            } finally {
                consumer.close();
            }
        }
    }

    private static double plainTrial(Connection connection, Jdbi jdbi, String queue, int batch, int messages)
            throws Exception {
        Channel channel = connection.createChannel();
        Handle handle = jdbi.open();
        long[] committed = new long[1];
        List<Long> pending = new ArrayList<>(batch);
        try {
            long started = System.nanoTime();
            // Auto-ack: the broker forgets each message as it sends it, the baseline that does no bookkeeping.
            channel.basicConsume(queue, true, new DefaultConsumer(channel) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
                    pending.add(ByteBuffer.wrap(body).getLong());
                    if (pending.size() == batch) {
                        handle.useTransaction(tx -> {
                            for (long qty : pending) {
                                tx.execute("UPDATE stock SET total = total + ? WHERE id = 1", qty);
                            }
                        });
                        synchronized (committed) {
                            committed[0] += pending.size();
                        }
                        pending.clear();
                    }
                }
            });
            return rateWhen(started, messages, () -> {
                synchronized (committed) {
                    return committed[0];
                }
            });
        } finally {
            channel.close();
            handle.close();
        }
    }

    private static double rateWhen(long started, int messages, LongSupplier done) {
        long deadline = started + TimeUnit.MINUTES.toNanos(5);
        while (done.getAsLong() < messages) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + done.getAsLong() + " of " + messages + " done in 5 minutes");
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
        }
        return messages / ((System.nanoTime() - started) / 1e9);
    }

    private static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n == 0 ? Double.NaN : n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
