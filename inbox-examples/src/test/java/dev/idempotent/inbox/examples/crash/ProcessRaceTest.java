package dev.idempotent.inbox.examples.crash;

import dev.idempotent.inbox.examples.crash.ReceiverProcess.Item;
import dev.idempotent.inbox.examples.crash.ReceiverProcess.Reply;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three receiver processes deliver the same ids at the same moment. Each prints READY and blocks
 * on its standard input; the parent then writes each its round's work in one line, to all three
 * back to back, which is the start signal. A quarter of the deliveries offer a different quantity.
 */
class ProcessRaceTest {

    static final int PROCESSES = 3;
    static final int ROUNDS = 5;
    static final int IDS_PER_ROUND = 40;

    @Test
    void threeProcessesDeliveringTheSameIdsApplyEachOnce(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("race.db");
        // A long busy timeout: in a race a wait is expected; a busy failure here would be a finding.
        Duration busyTimeout = Duration.ofSeconds(30);
        List<ReceiverProcess> receivers = new ArrayList<>();
        try {
            // The first creates the file and switches it to WAL alone; the others then start side by side.
            receivers.add(ReceiverProcess.start(db, busyTimeout));
            List<CompletableFuture<ReceiverProcess>> others = new ArrayList<>();
            for (int p = 1; p < PROCESSES; p++) {
                others.add(CompletableFuture.supplyAsync(() -> ReceiverProcess.start(db, busyTimeout)));
            }
            for (CompletableFuture<ReceiverProcess> other : others) {
                receivers.add(other.get());
            }

            RaceLedger ledger = new RaceLedger();
            for (int round = 0; round < ROUNDS; round++) {
                List<List<Item>> work = new ArrayList<>();
                List<String> lines = new ArrayList<>();
                for (int p = 0; p < PROCESSES; p++) {
                    List<Item> items = new ArrayList<>();
                    for (int i = 0; i < IDS_PER_ROUND; i++) {
                        int n = round * IDS_PER_ROUND + i;
                        items.add(new Item("race-" + n, ThreadRaceTest.qty(n, p)));
                    }
                    work.add(items);
                    lines.add(ReceiverProcess.batchLine(items));
                }
                // GO: every receiver is blocked reading; the lines were built beforehand.
                for (int p = 0; p < PROCESSES; p++) {
                    receivers.get(p).sendLine(lines.get(p));
                }
                for (int p = 0; p < PROCESSES; p++) {
                    List<Reply> replies = receivers.get(p).awaitBatch(IDS_PER_ROUND);
                    for (int i = 0; i < IDS_PER_ROUND; i++) {
                        Item item = work.get(p).get(i);
                        Reply reply = replies.get(i);
                        if (!reply.id().equals(item.id())) {
                            throw new IllegalStateException("reply " + reply + " out of order, expected " + item);
                        }
                        ledger.add("process-" + receivers.get(p).pid(), item.id(), item.qty(), reply.kind());
                    }
                }
            }
            for (ReceiverProcess receiver : receivers) {
                receiver.quit();
            }

            // The effect runs in the children; the independent connection's total stands in for its count.
            String counts = ledger.verify(StockView.read(db), ROUNDS * IDS_PER_ROUND, -1);
            System.out.printf("[process-race] %d receiver JVMs x %d rounds x %d ids, each round started by one line"
                    + " written to all of them: %s%n", PROCESSES, ROUNDS, IDS_PER_ROUND, counts);
        } finally {
            receivers.forEach(ReceiverProcess::close);
        }
    }
}
