package dev.idempotent.inbox.examples.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OutboxTest {

    @TempDir
    Path dir;

    @Test
    void enqueueingTheSameItemAgainChangesNothing() {
        try (Outbox outbox = Outbox.open(dir.resolve("outbox.db"))) {
            assertEquals(Enqueued.ADDED, outbox.enqueue("snack-7", 7));
            assertEquals(Enqueued.ALREADY_ENQUEUED, outbox.enqueue("snack-7", 7));
            assertEquals(1, outbox.pending().size());
        }
    }

    @Test
    void anotherQtyForAKnownIdIsRefusedAndTheFirstKept() {
        try (Outbox outbox = Outbox.open(dir.resolve("outbox.db"))) {
            outbox.enqueue("snack-7", 7);
            assertEquals(Enqueued.REFUSED_OTHER_QTY, outbox.enqueue("snack-7", 8));
            assertEquals(7, outbox.find("snack-7").orElseThrow().qty());
        }
    }

    @Test
    void pendingItemsSurviveReopeningInEnqueueOrder() {
        try (Outbox first = Outbox.open(dir.resolve("outbox.db"))) {
            first.enqueueAll(List.of(new Outbox.Item("zebra", 1), new Outbox.Item("apple", 2), new Outbox.Item("zebra", 1)));
            first.markAcked("zebra", true);
            first.enqueue("mango", 3);
        }
        try (Outbox reopened = Outbox.open(dir.resolve("outbox.db"))) {
            assertEquals(List.of("apple", "mango"), reopened.pending().stream().map(OutboxItem::id).toList());
            assertEquals(ItemState.ACKED, reopened.find("zebra").orElseThrow().state());
        }
    }

    @Test
    void invalidItemsAreRefusedBeforeAnythingIsWritten() {
        try (Outbox outbox = Outbox.open(dir.resolve("outbox.db"))) {
            assertThrows(IllegalArgumentException.class, () -> new Outbox.Item("", 1));
            assertThrows(IllegalArgumentException.class, () -> new Outbox.Item("snack\u00007", 1));
            assertThrows(IllegalArgumentException.class, () -> new Outbox.Item("x".repeat(256), 1));
            assertThrows(IllegalArgumentException.class, () -> new Outbox.Item("snack-7", 0));
            assertEquals(0, outbox.counts().get(ItemState.PENDING));
        }
    }

    @Test
    void itemsFileReadsIdQtyLines() throws IOException {
        Path file = dir.resolve("items.csv");
        Files.writeString(file, "id,qty\n# a comment\nsnack-7,7\n\n  snack-8 , 8 \n");
        assertEquals(List.of(new Outbox.Item("snack-7", 7), new Outbox.Item("snack-8", 8)), ItemsFile.read(file));

        Files.writeString(file, "snack-7,7\nsnack-8,seven\n");
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> ItemsFile.read(file));
        assertTrue(bad.getMessage().contains("line 2"), bad.getMessage());
    }
}
