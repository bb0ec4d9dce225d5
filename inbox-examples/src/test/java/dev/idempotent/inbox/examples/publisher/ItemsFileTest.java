package dev.idempotent.inbox.examples.publisher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The publisher's items file is CSV: {@code id,qty[,origin]}, RFC 4180 quoting. */
class ItemsFileTest {

    @TempDir
    Path dir;

    private List<Outbox.Item> read(String text) throws IOException {
        Path file = dir.resolve("items.csv");
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return ItemsFile.read(file);
    }

    private ItemsFile.Malformed malformed(String text) {
        return assertThrows(ItemsFile.Malformed.class, () -> read(text));
    }

    @Test
    void quotedIdLosesItsQuotes() throws IOException {
        assertEquals(List.of(new Outbox.Item("snack-7", 7)), read("\"snack-7\",7\n"));
        assertEquals(List.of(new Outbox.Item("snack-7", 7)), read("\"snack-7\",\"7\"\n"));
    }

    @Test
    void quotedFieldMayHoldACommaAndDoubledQuotes() throws IOException {
        assertEquals(List.of(new Outbox.Item("crate 3, shelf \"B\"", 2), new Outbox.Item("a,b", 1)),
                read("\"crate 3, shelf \"\"B\"\"\",2\r\n\"a,b\",1\r\n"));
    }

    @Test
    void headerCommentsBlankLinesAndSpacesAroundFieldsAreSkipped() throws IOException {
        assertEquals(List.of(new Outbox.Item("snack-7", 7), new Outbox.Item("snack-8", 8)),
                read("id,qty\n# a comment\nsnack-7,7\n\n   \n  snack-8 , 8 \n"));
        assertEquals(List.of(new Outbox.Item("snack-7", 7)), read("\uFEFFID,Qty,Origin\nsnack-7,7\n"));
    }

    @Test
    void originColumnIsOptionalPerLine() throws IOException {
        assertEquals(List.of(new Outbox.Item("snack-7", 7, Optional.of(Instant.parse("2024-05-01T12:00:00Z"))),
                        new Outbox.Item("snack-8", 8), new Outbox.Item("snack-9", 9)),
                read("id,qty,origin\nsnack-7,7,2024-05-01T14:00:00+02:00\nsnack-8,8,\nsnack-9,9\n"));
    }

    @Test
    void wrongColumnCountNamesTheLine() {
        ItemsFile.Malformed tooMany = malformed("id,qty\nsnack-7,7\n# comment\nsnack,8,8,x\n");
        assertEquals(4, tooMany.line());
        assertTrue(tooMany.reason().contains("expected id,qty or id,qty,origin, found 4 fields"), tooMany.reason());
        ItemsFile.Malformed tooFew = malformed("snack-7\n");
        assertEquals(1, tooFew.line());
        assertTrue(tooFew.reason().contains("found 1 field"), tooFew.reason());
    }

    @Test
    void unquotedCommaInAnIdIsAnExtraColumn() {
        ItemsFile.Malformed bad = malformed("snack,7,7\n");
        assertEquals(1, bad.line());
        assertTrue(bad.reason().contains("origin"), "a third field is read as the origin: " + bad.reason());
    }

    @Test
    void badQuantityNamesTheLineAndTheValue() {
        for (String qty : List.of("seven", "0", "-1", "2147483648", "7.0", "")) {
            ItemsFile.Malformed bad = malformed("snack-6,6\nsnack-7," + qty + "\n");
            assertEquals(2, bad.line(), qty);
            assertTrue(bad.reason().startsWith("qty must be an integer from 1 to 2147483647, was '" + qty + "'"),
                    bad.reason());
        }
    }

    @Test
    void badIdNamesTheLine() {
        ItemsFile.Malformed tooLong = malformed("snack-6,6\n" + "x".repeat(256) + ",7\n");
        assertEquals(2, tooLong.line());
        assertTrue(tooLong.reason().startsWith("id is longer than 255 characters"), tooLong.reason());
        ItemsFile.Malformed empty = malformed("\"\",7\n");
        assertEquals(1, empty.line());
        assertTrue(empty.reason().startsWith("id is blank"), empty.reason());
        ItemsFile.Malformed control = malformed("id,qty\n\"snack\t7\",7\n");
        assertEquals(2, control.line());
        assertTrue(control.reason().startsWith("id holds a control character"), control.reason());
    }

    @Test
    void badOriginNamesTheLine() {
        ItemsFile.Malformed bad = malformed("snack-6,6\nsnack-7,7,yesterday\n");
        assertEquals(2, bad.line());
        assertTrue(bad.reason().startsWith("origin must be an ISO-8601 time such as 2024-05-01T12:00:00Z, was 'yesterday'"),
                bad.reason());
    }

    @Test
    void brokenQuotingNamesTheLine() {
        ItemsFile.Malformed unclosed = malformed("snack-6,6\n\"snack-7,7\n");
        assertEquals(2, unclosed.line());
        ItemsFile.Malformed stray = malformed("snack-6,6\nsnack-5,5\n\"snack\"-7,7\n");
        assertEquals(3, stray.line());
    }

    @Test
    void messageNamesTheFileAndTheLine() {
        ItemsFile.Malformed bad = malformed("snack-7,seven\n");
        assertEquals(dir.resolve("items.csv") + " line 1: " + bad.reason(), bad.getMessage());
    }

    @Test
    void textThatIsNotUtf8IsRefused() throws IOException {
        Path file = dir.resolve("items.csv");
        Files.write(file, new byte[] {'s', ',', '6', '\n', 's', (byte) 0xff, ',', '7', '\n'});
        ItemsFile.Malformed bad = assertThrows(ItemsFile.Malformed.class, () -> ItemsFile.read(file));
        assertEquals(2, bad.line());
        assertTrue(bad.reason().contains("UTF-8"), bad.reason());
    }
}
